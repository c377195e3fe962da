#!/usr/bin/python3
"""Optuna's multi-objective samplers on the problems of benchmarks/multi_objective.

The same problems, spaces and constraints as tests/search/mo_problems.h
(change both together). Needs Debian's python3-optuna (3.1;
TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh). Samplers:
  nsga2   NSGAIISampler(seed=s)  (with constraints_func for a constrained problem)
  tpe     TPESampler(seed=s): multi-objective TPE (MOTPE), univariate
  tpe_mv  TPESampler(multivariate=True, seed=s)
  random  RandomSampler(seed=s)
Problems: the first family (mo_problems()) and the second (mo_hard_problems():
zdt4, zdt6, zdt6_in, dtlz1, dtlz7, dtlz7_in, and tnk and srn with their own
constraints).
One JSON object per line and run: the losses of every trial in order (the
benchmark computes the hypervolumes, with the same code as for ours),
their constraint violation, and the seconds the run took:

  optuna_multi_objective.py --trials N --seeds K [--first-seed S]
                            [--problems a,b] [--samplers a,b] [--jobs J]

--jobs runs J studies at once in separate processes (each study alone on
one core, so its seconds stay comparable).
"""
import argparse, json, math, multiprocessing, sys, time, warnings

import optuna

warnings.filterwarnings("ignore")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def box(t, d):
    return [t.suggest_float(f"x{i}", 0, 1) for i in range(d)]


def zdt(which):
    def f(t):
        x = box(t, 10)
        f1 = x[0]
        g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
        r = f1 / g
        h = (1 - math.sqrt(r) if which == 1 else 1 - r * r if which == 2
             else 1 - math.sqrt(r) - r * math.sin(10 * math.pi * f1))
        return [f1, g * h]
    return f


def dtlz2(t):
    x = box(t, 8)
    g = sum((v - 0.5) ** 2 for v in x[2:])
    a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
    return [(1 + g) * math.cos(a) * math.cos(b), (1 + g) * math.cos(a) * math.sin(b),
            (1 + g) * math.sin(a)]


def mlp_latency(t):
    lr = t.suggest_float("lr", 1e-5, 1e-1, log=True)
    opt = t.suggest_categorical("opt", ["adam", "sgd", "rmsprop"])
    drop = t.suggest_float("drop", 0, 0.5)
    act = t.suggest_categorical("act", ["relu", "gelu", "tanh", "sigmoid"])
    layers = t.suggest_int("layers", 1, 8)
    width = t.suggest_int("width", 16, 512, step=16)
    lr_term = math.log10(lr) + 2.5 + (1.0 if opt == "sgd" else 0.0)
    capacity = layers * width / 256
    error = lr_term ** 2 + 4 * (drop - 0.2) ** 2 + 1.2 / (1 + capacity)
    error += {"adam": 0, "sgd": 0.3, "rmsprop": 0.6}[opt]
    error += {"relu": 0, "gelu": 0.05, "tanh": 0.4, "sigmoid": 0.4}[act]
    latency = 0.2 + capacity * {"gelu": 1.3, "sigmoid": 1.1}.get(act, 1.0)
    return [error, latency]


def cnn_latency(t):
    channels = t.suggest_int("channels", 8, 256, log=True)
    kernel = t.suggest_categorical("kernel", [3, 5, 7])
    batch = t.suggest_categorical("batch", [32, 64, 128, 256])
    lr = t.suggest_float("lr", 1e-4, 1, log=True)
    wd = t.suggest_float("wd", 1e-6, 1e-2, log=True)
    bits = t.suggest_categorical("bits", [8, 16, 32])
    lr_term = math.log10(lr) - (-2 + 0.3 * math.log2(batch / 32))
    wd_term = math.log10(wd) + 4
    error = 0.3 * lr_term ** 2 + 0.1 * wd_term ** 2 + 0.05 * math.log2(batch / 32)
    error += 1.5 / (1 + channels / 16) * {3: 1.0, 5: 0.85, 7: 0.8}[kernel]
    error += {8: 0.1, 16: 0.01, 32: 0.0}[bits]
    latency = channels * kernel * kernel / 500.0 * bits / 32 + 8 / math.sqrt(batch)
    return [error, latency]


def zdt4(t):
    x = [t.suggest_float("x0", 0, 1)] + [t.suggest_float(f"x{i}", -5, 5) for i in range(1, 10)]
    g = 1 + 90 + sum(v * v - 10 * math.cos(4 * math.pi * v) for v in x[1:])
    return [x[0], g * (1 - math.sqrt(x[0] / g))]


def moved(v, centre):
    return abs(v - centre) / (1 - centre)


def zdt6(centre):
    def f(t):
        x = box(t, 10)
        f1 = 1 - math.exp(-4 * x[0]) * math.sin(6 * math.pi * x[0]) ** 6
        g = 1 + 9 * (sum(moved(v, centre) for v in x[1:]) / 9) ** 0.25
        return [f1, g * (1 - (f1 / g) ** 2)]
    return f


def dtlz1(t):
    x = box(t, 7)
    g = 100 * (5 + sum((v - 0.5) ** 2 - math.cos(20 * math.pi * (v - 0.5)) for v in x[2:]))
    return [0.5 * x[0] * x[1] * (1 + g), 0.5 * x[0] * (1 - x[1]) * (1 + g),
            0.5 * (1 - x[0]) * (1 + g)]


def dtlz7(centre):
    def f(t):
        x = box(t, 8)
        g = 1 + 9 * sum(moved(v, centre) for v in x[2:]) / 6
        h = 3 - sum(v / (1 + g) * (1 + math.sin(3 * math.pi * v)) for v in x[:2])
        return [x[0], x[1], (1 + g) * h]
    return f


def tnk(t):
    x = [t.suggest_float(f"x{i}", 1e-6, math.pi) for i in range(2)]
    t.set_user_attr("constraint", [
        1 + 0.1 * math.cos(16 * math.atan(x[0] / x[1])) - x[0] ** 2 - x[1] ** 2,
        (x[0] - 0.5) ** 2 + (x[1] - 0.5) ** 2 - 0.5])
    return x


def srn(t):
    x = [t.suggest_float(f"x{i}", -20, 20) for i in range(2)]
    t.set_user_attr("constraint", [x[0] ** 2 + x[1] ** 2 - 225, x[0] - 3 * x[1] + 10])
    return [2 + (x[0] - 2) ** 2 + (x[1] - 1) ** 2, 9 * x[0] - (x[1] - 1) ** 2]


# Problems that set their own constraint (a user attribute) from the config.
OWN_CONSTRAINTS = {"tnk", "srn"}

PROBLEMS = {"zdt4": (zdt4, 2), "zdt6": (zdt6(0), 2), "zdt6_in": (zdt6(0.35), 2),
            "dtlz1": (dtlz1, 3), "dtlz7": (dtlz7(0), 3), "dtlz7_in": (dtlz7(0.35), 3),
            "tnk": (tnk, 2), "srn": (srn, 2),
            "zdt1": (zdt(1), 2), "zdt2": (zdt(2), 2), "zdt3": (zdt(3), 2), "dtlz2": (dtlz2, 3),
            "mlp_latency": (mlp_latency, 2), "cnn_latency": (cnn_latency, 2)}


def constrained(name):
    """The constraint of problem NAME + "_c" (tests/search/mo_problems.h's
    mo_constraint): a value <= 0 when feasible, from the losses."""
    if name.startswith("zdt"):
        return lambda losses: [0.5 - losses[0]]  # the front's left half is cut off
    if name == "dtlz2":
        return lambda losses: [0.5 - losses[2]]
    return lambda losses: [losses[1] - 3.0]  # latency at most 3


def sampler(kind, seed, constraints_func):
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if kind == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, constraints_func=constraints_func)
    multivariate = kind == "tpe_mv"
    return optuna.samplers.TPESampler(seed=seed, multivariate=multivariate,
                                      constraints_func=constraints_func)


def run(name, kind, seed, trials):
    base = name[:-2] if name.endswith("_c") else name
    f, m = PROBLEMS[base]
    constraint = constrained(base) if name.endswith("_c") else None
    own = base in OWN_CONSTRAINTS
    losses, violations = [], []

    def objective(t):
        values = f(t)
        if constraint:
            t.set_user_attr("constraint", constraint(values))
        if constraint or own:
            violations.append(sum(max(v, 0.0) for v in t.user_attrs["constraint"]))
        losses.append(values)
        return values

    constraints_func = (lambda t: t.user_attrs["constraint"]) if constraint or own else None
    study = optuna.create_study(directions=["minimize"] * m,
                                sampler=sampler(kind, seed, constraints_func))
    start = time.perf_counter()
    study.optimize(objective, n_trials=trials)
    seconds = time.perf_counter() - start
    return {"bench": "mo", "problem": name, "sampler": kind, "seed": seed, "losses": losses,
            "violations": violations, "seconds": seconds}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--problems", default=",".join(PROBLEMS))
    p.add_argument("--samplers", default="nsga2,tpe,tpe_mv")
    p.add_argument("--jobs", type=int, default=1)
    a = p.parse_args()
    print(json.dumps({"bench": "env", "optuna": optuna.__version__,
                      "python": sys.version.split()[0]}), flush=True)
    work = [(name, kind, seed, a.trials) for name in a.problems.split(",")
            for kind in a.samplers.split(",") for seed in range(a.first_seed, a.first_seed + a.seeds)]
    if a.jobs <= 1:
        for w in work:
            print(json.dumps(run(*w)), flush=True)
        return
    with multiprocessing.Pool(a.jobs) as pool:
        for line in pool.imap(run_line, work):
            print(line, flush=True)


def run_line(w):
    return json.dumps(run(*w))


if __name__ == "__main__":
    main()
