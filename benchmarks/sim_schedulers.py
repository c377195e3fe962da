#!/usr/bin/python3
"""sim_schedulers: which scheduler reaches a quality first on a simulated cluster.

Runs `tunerun simulate --workers N` for ASHA, HyperBand, BOHB (HyperBand
for_bohb with the bohb searcher) and random search (FIFO), each over the
same seeds, on the crossing learning curves of benchmarks/multi_fidelity
([simulation] curve = "crossing": high learning rates lead early and
plateau lower), and prints per run, medians over the seeds: the simulated
hours until the best result first reached each target accuracy ("never":
not in the run), the best accuracy at the end, the trials started and the
simulated span.

Each iteration lasts --iteration-s simulated seconds (300: five minutes,
jittered by 10%). In virtual time (where the build has [simulation] time)
that is the iteration's length and a run takes seconds. Without it, the run
is in real time with iterations of --real-iteration-s seconds, and every
time is scaled by iteration_s / real_iteration_s into simulated time.

    /usr/bin/python3 benchmarks/sim_schedulers.py [--tunerun build/tunerun]
        [--workers 256] [--seeds 3] [--samples 512] [--iteration-s 300]
        [--real-iteration-s 0.5] [--targets 0.85,0.88,0.90] [--time auto|virtual|real]
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

RUNS = [  # label, searcher, scheduler table, whether it pauses trials (they need checkpoints)
    ("asha+random", "random",
     'type = "asha"\nmax_t = 81\ngrace_period = 1\nreduction_factor = 3', False),
    ("hyperband+random", "random", 'type = "hyperband"\nmax_t = 81\nreduction_factor = 3',
     True),
    ("hb_for_bohb+bohb", "bohb",
     'type = "hyperband"\nmax_t = 81\nreduction_factor = 3\nfor_bohb = true', True),
    ("fifo+random", "random", 'type = "fifo"', False),
]

SWEEP = """\
name = "{name}"
metric = "accuracy"
mode = "max"
num_samples = {samples}

[trainable]
builtin = "learning_curve"

[param_space]
lr = {{ loguniform = [1e-4, 1] }}
momentum = {{ uniform = [0, 0.99] }}
layers = {{ randint = [1, 9] }}
dropout = {{ uniform = [0, 0.6] }}
iterations = 81
checkpoint_for_scheduler = {pauses}

[checkpoint]
num_to_keep = 1

[search]
algorithm = "{searcher}"

[scheduler]
{scheduler}

[cluster]
launcher = "sim"

[simulation]
curve = "crossing"
iteration_s = {iteration_s}
iteration_jitter = 0.1
"""

# "... 12.34 h (44424 s)": the seconds.
SECONDS = re.compile(r"\(([0-9.e+-]+) s\)")


def has_virtual_time(tunerun, folder):
    """Whether this build's [simulation] has a `time` row."""
    probe = os.path.join(folder, "probe.toml")
    with open(probe, "w") as f:
        f.write('[trainable]\nbuiltin = "learning_curve"\n')
    out = subprocess.run([tunerun, "validate", probe, "--print-config", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return "time" in json.loads(out).get("simulation", {})


def simulate(args, folder, label, searcher, scheduler, pauses, seed, iteration_s, virtual):
    name = f"{label.replace('+', '_')}_s{seed}"
    sweep = os.path.join(folder, name + ".toml")
    with open(sweep, "w") as f:
        f.write(SWEEP.format(name=name, samples=args.samples, searcher=searcher,
                             scheduler=scheduler, pauses=str(pauses).lower(),
                             iteration_s=iteration_s))
    command = [args.tunerun, "simulate", sweep, "--workers", str(args.workers), "--seed",
               str(seed), "--targets", ",".join(str(t) for t in args.targets), "--time",
               "virtual" if virtual else "real", "--storage-path", os.path.join(folder, "runs"),
               "-q"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    found = {"reach": []}
    for line in run.stdout.splitlines():
        seconds = SECONDS.search(line)
        if line.startswith("Simulated"):
            found["span_s"] = float(seconds.group(1))
            found["trials"] = int(re.search(r"(\d+) trials started", line).group(1))
        elif line.startswith("Best accuracy"):
            found["best"] = float(line.split()[2].rstrip(","))
        elif line.startswith("Time to accuracy"):
            found["reach"].append(float(seconds.group(1)) if seconds else math.inf)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tunerun", default="build/tunerun")
    parser.add_argument("--workers", type=int, default=256)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=512, help="trials per run")
    parser.add_argument("--iteration-s", type=float, default=300)
    parser.add_argument("--real-iteration-s", type=float, default=0.5)
    parser.add_argument("--targets", default="0.85,0.88,0.90")
    parser.add_argument("--time", choices=["auto", "virtual", "real"], default="auto")
    args = parser.parse_args()
    args.targets = [float(t) for t in args.targets.split(",")]
    with tempfile.TemporaryDirectory(prefix="sim_schedulers_") as folder:
        virtual = args.time == "virtual" or (args.time == "auto" and
                                             has_virtual_time(args.tunerun, folder))
        iteration_s = args.iteration_s if virtual else args.real_iteration_s
        scale = 1 if virtual else args.iteration_s / args.real_iteration_s
        results = {label: [] for label, _, _, _ in RUNS}
        for seed in range(args.seeds):
            for label, searcher, scheduler, pauses in RUNS:
                results[label].append(simulate(args, folder, label, searcher, scheduler, pauses,
                                               seed, iteration_s, virtual))
    print(f"Crossing curves, {args.workers} simulated workers, {args.samples} trials a run, "
          f"iterations of {args.iteration_s:g} simulated s; "
          + ("virtual time" if virtual else
             f"real time with {args.real_iteration_s:g} s iterations, times x {scale:g}")
          + f"; medians over seeds 0..{args.seeds - 1}")
    header = [f"h to {t:g}" for t in args.targets] + ["best at end", "trials", "span h"]
    print(f"{'run':<18}" + "".join(f"{h:>13}" for h in header))
    for label, _, _, _ in RUNS:
        runs = results[label]
        cells = []
        for i in range(len(args.targets)):
            hours = statistics.median(r["reach"][i] for r in runs) * scale / 3600
            cells.append("never" if math.isinf(hours) else f"{hours:.2f}")
        cells.append(f"{statistics.median(r.get('best', 0) for r in runs):.4f}")
        cells.append(f"{statistics.median(r['trials'] for r in runs):.0f}")
        cells.append(f"{statistics.median(r['span_s'] for r in runs) * scale / 3600:.2f}")
        print(f"{label:<18}" + "".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    main()
