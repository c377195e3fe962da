#!/usr/bin/python3
"""Optuna's TPESampler on the functions of search_quality (--more-functions,
--shape-functions).

The same functions, spaces and optima as benchmarks/search_quality.cpp and
tests/search/objectives.h, on any seeds (the shared optuna_baseline.py runs
Branin and Hartmann6 on seeds 0..N-1 only). Needs Debian's python3-optuna
(TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh). One JSON object per line:

  optuna_functions.py [--seeds N] [--first-seed S] [--functions a,b,...]
"""
import json, math, sys, time, statistics as st, warnings

import numpy as np
import optuna

warnings.filterwarnings("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def box(t, d, low, high):
    return np.array([t.suggest_float(f"x{i}", low, high) for i in range(d)])


def branin(t):
    x1, x2 = t.suggest_float("x1", -5, 10), t.suggest_float("x2", 0, 15)
    return (x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2 \
        + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10


A6 = np.array([[10, 3, 17, 3.5, 1.7, 8], [.05, 10, 17, .1, 8, 14],
               [3, 3.5, 1.7, 10, 17, 8], [17, 8, .05, 10, .1, 14]])
P6 = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                      [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
A3 = np.array([[3, 10, 30], [.1, 10, 35], [3, 10, 30], [.1, 10, 35]])
P3 = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547],
                      [381, 5743, 8828]])
ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann(a, p):
    def f(t):
        x = box(t, a.shape[1], 0, 1)
        return float(-(ALPHA * np.exp(-(a * (x - p) ** 2).sum(1))).sum())
    return f


def camel(t):
    x, y = t.suggest_float("x0", -3, 3), t.suggest_float("x1", -2, 2)
    return (4 - 2.1 * x * x + x ** 4 / 3) * x * x + x * y + (-4 + 4 * y * y) * y * y


def rosen4_log(t):
    x = box(t, 4, -5, 10)
    return math.log1p(sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(3)))


def rosen4(t):
    x = box(t, 4, -5, 10)
    return float(sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(3)))


def styb_tang4(t):
    x = box(t, 4, -5, 5)
    return float((x ** 4 - 16 * x ** 2 + 5 * x).sum() / 2)


def ackley(d):
    def f(t):
        x = box(t, d, -32.768, 32.768)
        return float(-20 * math.exp(-0.2 * math.sqrt((x ** 2).sum() / d))
                     - math.exp(np.cos(2 * math.pi * x).sum() / d) + 20 + math.e)
    return f


def rosen10_log(t):
    x = box(t, 10, -5, 10)
    return math.log1p(sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(9)))


def rastrigin(d, low, high, shift):
    def f(t):
        x = box(t, d, low, high) - shift
        return float(10 * d + (x ** 2 - 10 * np.cos(2 * math.pi * x)).sum())
    return f


def griewank(d, half_width):
    def f(t):
        x = box(t, d, -half_width, half_width)
        return float(1 + (x ** 2).sum() / 4000 - np.cos(x / np.sqrt(np.arange(1, d + 1))).prod())
    return f


def schwefel(d):
    def f(t):
        x = box(t, d, -500, 500)
        return float(418.9828872724339 * d - (x * np.sin(np.sqrt(np.abs(x)))).sum())
    return f


def levy4(t):
    w = 1 + (box(t, 4, -10, 10) - 1) / 4
    head = math.sin(math.pi * w[0]) ** 2
    body = sum((w[i] - 1) ** 2 * (1 + 10 * math.sin(math.pi * w[i] + 1) ** 2) for i in range(3))
    return float(head + body + (w[3] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[3]) ** 2))


def hpo(integers):
    def f(t):
        lr = t.suggest_float("lr", 1e-5, 1e-1, log=True)
        opt = t.suggest_categorical("opt", ["adam", "sgd", "rmsprop"])
        drop = t.suggest_float("drop", 0, 0.5)
        act = t.suggest_categorical("act", ["relu", "gelu", "tanh", "sigmoid"])
        r = math.log10(lr) + 2.5 + (1.0 if opt == "sgd" else 0.0)
        v = r * r + 4 * (drop - 0.2) ** 2
        v += {"adam": 0, "sgd": 0.3, "rmsprop": 0.6}[opt]
        v += {"relu": 0, "gelu": 0.05, "tanh": 0.4, "sigmoid": 0.4}[act]
        if integers:
            layers = t.suggest_int("layers", 1, 8)       # randint(1, 9): upper exclusive
            width = t.suggest_int("width", 16, 512, step=16)
            v += 0.3 * abs(layers - 4) + 0.2 * (math.log2(width) - 7) ** 2
        return v
    return f


FUNCTIONS = {
    "branin": (branin, 0.397887), "hartmann6": (hartmann(A6, P6), -3.32237),
    "hartmann3": (hartmann(A3, P3), -3.86278), "camel": (camel, -1.0316285),
    "rosen4_log": (rosen4_log, 0), "styb_tang4": (styb_tang4, -39.16617 * 4),
    "ackley5": (ackley(5), 0), "hpo_choice": (hpo(False), 0), "hpo_mixed": (hpo(True), 0),
    # search_quality --shape-functions
    "rosen4": (rosen4, 0), "rastrigin4": (rastrigin(4, -5.12, 5.12, 0), 0),
    "ackley10": (ackley(10), 0), "rosen10_log": (rosen10_log, 0),  # search_quality --high-dims
    # search_quality --rugged
    "rastr2": (rastrigin(2, -5.12, 5.12, 0), 0), "rastr3_off": (rastrigin(3, -5.12, 5.12, 1.7), 0),
    "rastr6": (rastrigin(6, -5.12, 5.12, 0), 0), "griewank4": (griewank(4, 50), 0),
    "griewank6": (griewank(6, 50), 0), "griewank4_600": (griewank(4, 600), 0),
    "schwefel2": (schwefel(2), 0), "schwefel4": (schwefel(4), 0), "levy4": (levy4, 0),
    "ackley4": (ackley(4), 0),
}


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


if __name__ == "__main__":
    seeds, first = int(arg("--seeds", 10)), int(arg("--first-seed", 0))
    names = arg("--functions", ",".join(FUNCTIONS)).split(",")
    print(json.dumps({"bench": "env", "optuna": optuna.__version__,
                      "python": sys.version.split()[0]}), flush=True)
    for name in names:
        f, fmin = FUNCTIONS[name]
        best = {50: [], 100: []}
        t0 = time.perf_counter()
        for s in range(first, first + seeds):
            study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=s))
            study.optimize(f, n_trials=100)
            v = [t.value for t in study.trials]
            for c in best:
                best[c].append(min(v[:c]))
        print(json.dumps({"bench": "quality", "function": name, "sampler": "tpe", "seeds": seeds,
                          "first_seed": first, "optimum": fmin,
                          "median_best_50": st.median(best[50]),
                          "median_best_100": st.median(best[100]),
                          "ms_per_trial": 1e3 * (time.perf_counter() - t0) / (seeds * 100)}),
              flush=True)
