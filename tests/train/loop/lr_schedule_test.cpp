// Every schedule's rate at given steps against values worked out by hand
// from HF's formulas (warmup 2 of 10 steps, base rate 1), and the argument
// checks users meet first.
#include "train/loop/lr_schedule.h"

#include <doctest/doctest.h>

#include "core/errors.h"

using train::LrSchedule;
using train::LrScheduler;

TEST_CASE("warmup rises linearly from 0 for every schedule") {
  for (auto schedule : {LrSchedule::kConstant, LrSchedule::kLinear, LrSchedule::kCosine}) {
    LrScheduler s(schedule, 0.1, 2, 10);
    CHECK(s.lr(0) == doctest::Approx(0.0));
    CHECK(s.lr(1) == doctest::Approx(0.05));
    CHECK(s.lr(2) == doctest::Approx(0.1));
  }
}

TEST_CASE("constant, linear and cosine after warmup") {
  LrScheduler constant(LrSchedule::kConstant, 1.0, 2, 10);
  CHECK(constant.factor(7) == doctest::Approx(1.0));
  CHECK(constant.factor(10) == doctest::Approx(1.0));

  LrScheduler linear(LrSchedule::kLinear, 1.0, 2, 10);
  CHECK(linear.factor(4) == doctest::Approx(0.75));  // 1 - 2/8
  CHECK(linear.factor(6) == doctest::Approx(0.5));   // 1 - 4/8
  CHECK(linear.factor(9) == doctest::Approx(0.125));
  CHECK(linear.factor(10) == doctest::Approx(0.0));
  CHECK(linear.factor(12) == doctest::Approx(0.0));  // never negative

  LrScheduler cosine(LrSchedule::kCosine, 2.0, 2, 10);
  CHECK(cosine.factor(4) == doctest::Approx(0.8535534));  // (1 + cos(pi/4)) / 2
  CHECK(cosine.factor(6) == doctest::Approx(0.5));
  CHECK(cosine.factor(8) == doctest::Approx(0.1464466));  // (1 + cos(3pi/4)) / 2
  CHECK(cosine.lr(8) == doctest::Approx(0.2928932));
  CHECK(cosine.factor(10) == doctest::Approx(0.0));

  LrScheduler no_warmup(LrSchedule::kLinear, 1.0, 0, 4);
  CHECK(no_warmup.factor(0) == doctest::Approx(1.0));
  CHECK(no_warmup.factor(3) == doctest::Approx(0.25));
}

TEST_CASE("warmup steps come from warmup_steps, else the ratio rounded up") {
  CHECK(train::warmup_steps_for({.warmup_ratio = 0.05}, 100) == 5);
  CHECK(train::warmup_steps_for({.warmup_ratio = 0.05}, 30) == 2);  // ceil(1.5)
  CHECK(train::warmup_steps_for({.warmup_ratio = 0.5, .warmup_steps = 3}, 100) == 3);
}

TEST_CASE("bad arguments name the field") {
  CHECK_THROWS_WITH_AS(train::validate({.per_device_train_batch_size = 0}),
                       doctest::Contains("per_device_train_batch_size"), tune::ConfigError);
  CHECK_THROWS_WITH_AS(train::validate({.warmup_ratio = 1.5}), doctest::Contains("warmup_ratio"),
                       tune::ConfigError);
  CHECK_THROWS_WITH_AS(train::parse_lr_schedule("cosin"),
                       doctest::Contains("constant, linear, cosine"), tune::ConfigError);
  CHECK_THROWS_AS(train::parse_interval("epochs"), tune::ConfigError);
  CHECK(train::parse_interval("epoch") == train::Interval::kEpoch);
  CHECK_THROWS_AS(LrScheduler(LrSchedule::kLinear, 1.0, 0, 0), tune::ConfigError);
}
