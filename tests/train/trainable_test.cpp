#include "train/trainable.h"

#include <doctest/doctest.h>

#include "train/builtins/builtins.h"
#include "train/session.h"
#include "train/worker_env.h"
#include "train/worker_runtime.h"

TEST_CASE("built-in trainables are registered by name") {
  train::register_builtin_trainables();
  for (const char* name : {"quadratic", "branin", "learning_curve", "noop"}) {
    CHECK_MESSAGE(train::find_trainable(name) != nullptr, name);
  }
  CHECK(train::find_trainable("nope") == nullptr);
  auto names = train::trainable_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("report and get_context outside a worker fail clearly") {
  CHECK_FALSE(tune::is_worker());
  CHECK_THROWS_WITH_AS(train::report({{"loss", 1.0}}), doctest::Contains("outside a worker"),
                       tune::Error);
  CHECK_THROWS_AS(train::get_context(), tune::Error);
}

TEST_CASE("a worker environment with a missing variable names it") {
  unsetenv(train::kEnvController);
  CHECK_THROWS_WITH_AS(train::WorkerEnv::from_environment(),
                       doctest::Contains(train::kEnvController), tune::Error);
}

TEST_CASE("a worker run without a controller exits with an error code") {
  unsetenv(train::kEnvController);
  CHECK(train::run_worker() == 1);
}
