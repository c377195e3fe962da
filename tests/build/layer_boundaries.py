#!/usr/bin/env python3
"""Checks that no include runs up a layer or into another folder's internal/.

The layers, bottom first (a room is a folder, or a few named files):

  core  <  storage, search  <  schedulers  <  train, dashboard's library
        <  tune/system  <  tune's interfaces (callbacks, stoppers, progress,
           resources, cluster settings)  <  tune/spec  <  tune/launch
        <  its launchers (local, slurm, sim)  <  make_launcher, which
           chooses among them  <  tune/channel
        <  tune/execution  <  tune's public API (Tuner, configs, ResultGrid)
        <  tune/trainer  <  the front ends (the CLI, the Python module)
        <  the dashboard's executable (which shares the CLI's exit codes)

and, apart, libtorch's rooms: train/torch < train/loop, train/fashion_mnist
< train/models.

Two rules, two sources:
  - each file's own `#include "..."` lines (read from the sources): a file
    includes headers of its own room or of a lower layer, never of a room
    beside it or above it, and never another folder's `internal/`;
  - Ninja's dependency records (`ninja -t deps`): what each library's
    objects reach through every header they include, directly or not. Unity
    builds put several files into one object, so these records name the
    target, not the file: a library reaches no header of a room above its
    own folder's highest one.
Tests, benchmarks and examples may include anything (they test internals).

  layer_boundaries.py SOURCE_DIR BUILD_DIR   checks both, exit 1 on a violation
  layer_boundaries.py --self-test            checks that injected violations are caught
"""
import os
import re
import subprocess
import sys

from header_boundaries import parse_deps  # `ninja -t deps` output as {object: headers}

# (pattern, layer, room): a pattern is a folder ending in "/" or a file path
# without its extension (its .h and .cpp); the longest matching pattern
# places a file. Patterns naming the same room are one room.
ROOMS = [
    ("core/", 0, "core/"),
    ("storage/", 1, "storage/"),
    ("search/", 1, "search/"),
    ("schedulers/", 2, "schedulers/"),
    ("train/", 3, "train/"),
    ("dashboard/", 3, "dashboard/"),
    ("train/torch/", 4, "train/torch/"),
    ("train/loop/", 5, "train/loop/"),
    ("train/fashion_mnist/", 5, "train/fashion_mnist/"),
    ("train/models/", 6, "train/models/"),
    ("tune/system/", 10, "tune/system/"),
    ("tune/callback", 11, "tune's interfaces"),
    ("tune/stopper", 11, "tune's interfaces"),
    ("tune/builtin_stoppers", 11, "tune's interfaces"),
    ("tune/progress", 11, "tune's interfaces"),
    ("tune/resources", 11, "tune's interfaces"),
    ("tune/cluster", 11, "tune's interfaces"),
    ("tune/spec/", 12, "tune/spec/"),
    ("tune/launch/", 13, "tune/launch/"),
    ("tune/launch/local/", 14, "tune/launch/local/"),
    ("tune/launch/slurm/", 14, "tune/launch/slurm/"),
    ("tune/launch/sim/", 14, "tune/launch/sim/"),
    ("tune/launch/make_launcher", 15, "tune/launch/make_launcher"),
    ("tune/channel/", 16, "tune/channel/"),
    ("tune/execution/", 17, "tune/execution/"),
    ("tune/", 18, "tune's API"),
    ("tune/trainer/", 19, "tune/trainer/"),
    ("tune/cli/", 20, "tune/cli/"),
    ("bindings/", 20, "bindings/"),
    ("dashboard/main", 21, "dashboard/main"),
]
EXEMPT = ("tests/", "benchmarks/", "examples/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# The libraries' object folders (relative to the build folder) and the room
# of their sources' highest layer.
TARGETS = {
    "core/CMakeFiles/tunerun_core.dir": "core/",
    "storage/CMakeFiles/tunerun_storage.dir": "storage/",
    "search/CMakeFiles/tunerun_search.dir": "search/",
    "schedulers/CMakeFiles/tunerun_schedulers.dir": "schedulers/",
    "train/CMakeFiles/tunerun_train.dir": "train/",
    "dashboard/CMakeFiles/tunerun_dashboard.dir": "dashboard/",
    "tune/CMakeFiles/tunerun_tune.dir": "tune/",
    "tune/trainer/CMakeFiles/tunerun_trainer.dir": "tune/trainer/",
}


def room_of(path):
    """(room, layer) of a path relative to the source root; None outside every room."""
    stem = os.path.splitext(path)[0]
    best = None
    for pattern, layer, room in ROOMS:
        hit = path.startswith(pattern) if pattern.endswith("/") else stem == pattern
        if hit and (best is None or len(pattern) > len(best[0])):
            best = (pattern, layer, room)
    return None if best is None else best[2:0:-1]


def internal_owner(header):
    """The folder whose internal/ holds `header` ("storage/"), or None."""
    parts = header.split("/")
    if "internal" not in parts[:-1]:
        return None
    return "/".join(parts[: parts.index("internal")]) + "/"


def include_violations(files):
    """`files`: {path relative to the source root: text}."""
    found = []
    for path, text in sorted(files.items()):
        if path.startswith(EXEMPT):
            continue
        mine = room_of(path)
        if mine is None:
            continue
        for header in INCLUDE.findall(text):
            owner = internal_owner(header)
            if owner is not None and not path.startswith(owner):
                found.append(f"{path}: includes {header}, inside {owner}internal/")
                continue
            theirs = room_of(header)
            if theirs is None or theirs[0] == mine[0]:
                continue
            if theirs[1] >= mine[1]:
                where = "beside" if theirs[1] == mine[1] else "above"
                found.append(f"{path}: includes {header}, of {theirs[0]} (layer {theirs[1]}), "
                             f"{where} {mine[0]} (layer {mine[1]})")
    return found


def dep_violations(deps, source_dir):
    found = []
    prefix = os.path.realpath(source_dir) + "/"
    for obj, headers in sorted(deps.items()):
        target = next((t for t in TARGETS if obj.startswith(t + "/")), None)
        if target is None:
            continue
        top = room_of(TARGETS[target])[1]
        for header in headers:
            path = os.path.realpath(header) if os.path.isabs(header) else header
            if not path.startswith(prefix):
                continue
            room = room_of(path[len(prefix):])
            if room is not None and room[1] > top:
                found.append(f"{obj}: reaches {path[len(prefix):]}, of {room[0]} "
                             f"(layer {room[1]}), above {TARGETS[target]} (layer {top})")
                break
    return found


def read_sources(source_dir):
    listed = subprocess.run(["git", "-C", source_dir, "ls-files", "-co", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.split()
    files = {}
    for path in listed:
        if path.endswith((".h", ".cpp")) and os.path.isfile(os.path.join(source_dir, path)):
            with open(os.path.join(source_dir, path), errors="replace") as f:
                files[path] = f.read()
    return files


def self_test():
    files = {
        "tune/launch/process.cpp": '#include "tune/launch/process.h"\n',
        "tune/execution/decide.cpp": '#include "tune/execution/decide.h"\n#include "core/types.h"\n',
        "tests/tune/x_test.cpp": '#include "tune/tuner.h"\n#include "search/internal/tpe.h"\n',
        "search/factory.cpp": '#include "search/internal/tpe.h"\n',
    }
    assert include_violations(files) == [], include_violations(files)
    injected = dict(files)
    injected["tune/launch/process.cpp"] += '#include "tune/execution/controller.h"\n'
    injected["dashboard/curves.cpp"] = '#include "storage/internal/rows.h"\n'
    injected["storage/checkpoint_layout.cpp"] = '#include "search/domain.h"\n'
    found = include_violations(injected)
    assert len(found) == 3, found
    assert "tune/launch/process.cpp: includes tune/execution/controller.h" in found[2], found
    root = "/src"
    deps = {"core/CMakeFiles/tunerun_core.dir/Unity/unity_0_cxx.cxx.o":
            ["/usr/include/fmt/format.h", "/src/core/types.h"],
            "tune/CMakeFiles/tunerun_tune.dir/Unity/unity_0_cxx.cxx.o": ["/src/tune/tuner.h"]}
    assert dep_violations(deps, root) == [], dep_violations(deps, root)
    deps["core/CMakeFiles/tunerun_core.dir/Unity/unity_0_cxx.cxx.o"].append("/src/tune/tuner.h")
    deps["tune/CMakeFiles/tunerun_tune.dir/Unity/unity_0_cxx.cxx.o"].append(
        "/src/tune/cli/commands.h")
    assert len(dep_violations(deps, root)) == 2, dep_violations(deps, root)
    print("layer_boundaries: injected violations are caught")


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
        return
    if len(args) != 2:
        sys.exit(__doc__)
    source_dir, build_dir = args
    found = include_violations(read_sources(source_dir))
    done = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"layer_boundaries: ninja -t deps failed in {build_dir}: {done.stderr}")
    found += dep_violations(parse_deps(done.stdout), source_dir)
    for line in found:
        print(line)
    if found:
        sys.exit(f"layer_boundaries: {len(found)} include(s) break the layers")
    print("layer_boundaries: every include keeps to its layer")


if __name__ == "__main__":
    main()
