// Built-in trainables whose results are known, for examples, tests and
// benchmarks. Each reads its config with defaults, so any subset of keys may
// be searched.
//
//   quadratic       reports once: loss = (x - 3)^2 + (y + 1)^2; optimum 0 at x=3, y=-1.
//   branin          reports once: loss = Branin(x1, x2), x1 in [-5, 10], x2 in [0, 15];
//                   optimum 0.397887 at (-pi, 12.275), (pi, 2.275), (9.42478, 2.475).
//   learning_curve  reports every iteration t = 1..iterations (default 100):
//                   accuracy = ceiling * (1 - exp(-speed * t)), loss = 1 - accuracy;
//                   ceiling (0.9), speed (0.1), sleep_s per iteration (0),
//                   checkpoint_every (0: never) saves {"t": t} and resumes after it.
//                   Failure injection for tests, on a trial's first attempt
//                   only: fail_at (raise at that iteration), crash_at (exit
//                   abnormally), hang_at (SIGSTOP itself: alive but silent),
//                   vanish_at (exit 0 without a word, as a dead node's step).
//   noop            reports `iterations` (default 1) times at once: for overhead
//                   benchmarks.
#pragma once

namespace train {

// Registers the built-ins under the names above. Idempotent.
void register_builtin_trainables();

}  // namespace train
