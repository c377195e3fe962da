#!/usr/bin/python3
"""Optuna baselines on this machine, for side-by-side comparison.

Needs Debian's python3-optuna (TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh)
and Debian's /usr/bin/python3. Run by benchmarks/trial_throughput and
benchmarks/search_quality. Prints one JSON object per line, so a benchmark can read it.

  optuna_baseline.py overhead            trials/s and ms/trial, memory and SQLite
  optuna_baseline.py quality [--seeds N] median best value after 50/100 trials
  optuna_baseline.py pruner              us per report()+should_prune()
"""
import json, math, sys, tempfile, time, statistics as st, warnings

try:
    import numpy as np
    import optuna
except ImportError as e:
    sys.exit(f"optuna_baseline.py: {e}: install python3-optuna "
             "(TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh)")

warnings.filterwarnings("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)
S = optuna.samplers


def branin(t):
    x1, x2 = t.suggest_float("x1", -5, 10), t.suggest_float("x2", 0, 15)
    return (x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2 \
        + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10


A = np.array([[10, 3, 17, 3.5, 1.7, 8], [.05, 10, 17, .1, 8, 14],
              [3, 3.5, 1.7, 10, 17, 8], [17, 8, .05, 10, .1, 14]])
P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                     [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(t):
    x = np.array([t.suggest_float(f"x{i}", 0, 1) for i in range(6)])
    return float(-(ALPHA * np.exp(-(A * (x - P) ** 2).sum(1))).sum())


def storage(kind):
    if kind == "memory":
        return None
    return f"sqlite:///{tempfile.mkdtemp()}/s.db"


def emit(**kw):
    print(json.dumps(kw), flush=True)


def overhead(n=500):
    for kind in ("memory", "sqlite"):
        for name, smp in (("random", S.RandomSampler(seed=0)), ("tpe", S.TPESampler(seed=0))):
            study = optuna.create_study(storage=storage(kind), sampler=smp)
            t0 = time.perf_counter()
            study.optimize(lambda t: t.suggest_float("x", -10, 10) ** 2
                           + t.suggest_float("y", -10, 10) ** 2, n_trials=n)
            dt = time.perf_counter() - t0
            emit(bench="overhead", storage=kind, sampler=name, trials=n,
                 trials_per_s=n / dt, ms_per_trial=1e3 * dt / n)


def quality(seeds=10):
    samplers = {"random": lambda s: S.RandomSampler(seed=s),
                "tpe": lambda s: S.TPESampler(seed=s),
                "tpe_multivariate": lambda s: S.TPESampler(seed=s, multivariate=True),
                "cmaes": lambda s: S.CmaEsSampler(seed=s)}
    for fname, f, fmin in (("branin", branin, 0.397887), ("hartmann6", hartmann6, -3.32237)):
        for name, mk in samplers.items():
            best = {50: [], 100: []}
            t0 = time.perf_counter()
            for s in range(seeds):
                study = optuna.create_study(sampler=mk(s))
                study.optimize(f, n_trials=100)
                v = [t.value for t in study.trials]
                for c in best:
                    best[c].append(min(v[:c]))
            emit(bench="quality", function=fname, sampler=name, seeds=seeds, optimum=fmin,
                 median_best_50=st.median(best[50]), median_best_100=st.median(best[100]),
                 ms_per_trial=1e3 * (time.perf_counter() - t0) / (seeds * 100))


def pruner(n_trials=50, n_steps=100):
    for kind in ("memory", "sqlite"):
        for name, p in (("median", optuna.pruners.MedianPruner()),
                        ("sha", optuna.pruners.SuccessiveHalvingPruner()),
                        ("hyperband", optuna.pruners.HyperbandPruner(min_resource=1, max_resource=100))):
            study = optuna.create_study(storage=storage(kind), sampler=S.RandomSampler(seed=0), pruner=p)
            acc = [0.0, 0]

            def obj(t):
                x = t.suggest_float("x", 0, 1)
                for step in range(n_steps):
                    t0 = time.perf_counter()
                    t.report(x + 1 / (step + 1), step)
                    pr = t.should_prune()
                    acc[0] += time.perf_counter() - t0
                    acc[1] += 1
                    if pr:
                        raise optuna.TrialPruned()
                return x
            study.optimize(obj, n_trials=n_trials)
            emit(bench="pruner", storage=kind, pruner=name, us_per_report=1e6 * acc[0] / acc[1],
                 reports=acc[1])


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "overhead"
    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 10
    emit(bench="env", optuna=optuna.__version__, python=sys.version.split()[0])
    {"overhead": overhead, "quality": lambda: quality(seeds), "pruner": pruner}[what]()
