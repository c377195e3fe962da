#!/usr/bin/env python3
"""Checks, from the build's own dependency records, that heavy headers stay
where they are used:

  - libtorch's headers (torch/, ATen/, c10/, caffe2/) only in the objects of
    train/'s torch folders, the examples, benchmarks and tests: nothing
    under core/, storage/, search/, schedulers/, tune/, dashboard/ or the
    rest of train/ (the worker runtime, TorchTrainer) may reach one,
    directly or through another header;
  - toml++ only in tune/ (the sweep-file loader) and the tests;
  - CLI11 only in the tunerun executable's own units (tune/cli/) and tests.

  header_boundaries.py BUILD_DIR            reads `ninja -t deps` there
  header_boundaries.py --deps-file FILE     reads a saved listing instead

Prints each object that breaks a rule with the header that did it, and
exits 1 if any does.
"""
import re
import subprocess
import sys

TORCH = re.compile(r"/(torch/csrc|ATen|c10|caffe2)/|/include/torch/")
TOML = re.compile(r"/toml\+\+/")
CLI11 = re.compile(r"/CLI/")

# Object paths (relative to the build folder) by the folder of their target.
TORCH_FREE = re.compile(
    r"^(core|storage|search|schedulers|tune|dashboard|tune/trainer|train)/CMakeFiles/")
TOML_ALLOWED = re.compile(r"^(tune/CMakeFiles/tunerun_tune\.dir|tests)/")
CLI11_ALLOWED = re.compile(r"^(tune/CMakeFiles/tunerun\.dir|tests)/")
RULES = [
    ("libtorch", TORCH, lambda obj: TORCH_FREE.match(obj) is not None),
    ("toml++", TOML, lambda obj: TOML_ALLOWED.match(obj) is None),
    ("CLI11", CLI11, lambda obj: CLI11_ALLOWED.match(obj) is None),
]


def parse_deps(text):
    """`ninja -t deps` output: 'OBJ: #deps N, ...' then indented headers."""
    deps = {}
    current = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith((" ", "\t")):
            if current is not None:
                deps[current].append(line.strip())
        else:
            current = line.split(":", 1)[0]
            deps[current] = []
    return deps


def violations(deps):
    found = []
    for obj, headers in sorted(deps.items()):
        for name, pattern, forbidden in RULES:
            if not forbidden(obj):
                continue
            header = next((h for h in headers if pattern.search(h)), None)
            if header is not None:
                found.append(f"{obj}: includes {name} ({header})")
    return found


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--deps-file":
        with open(args[1]) as f:
            text = f.read()
    elif len(args) == 1:
        done = subprocess.run(["ninja", "-C", args[0], "-t", "deps"], capture_output=True,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"header_boundaries: ninja -t deps failed in {args[0]}: {done.stderr}")
        text = done.stdout
    else:
        sys.exit(__doc__)
    deps = parse_deps(text)
    if not deps:
        sys.exit("header_boundaries: no dependency records (build first; Ninja only)")
    found = violations(deps)
    for line in found:
        print(line)
    checked = sum(1 for obj in deps if TORCH_FREE.match(obj))
    print(f"header_boundaries: {len(deps)} objects, {checked} of them torch-free by rule, "
          f"{len(found)} violation(s)")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
