// ConcurrencyLimiter and Repeater.
#include <doctest/doctest.h>

#include "core/errors.h"
#include "search/internal/basic_variant.h"
#include "search/internal/concurrency_limiter.h"
#include "search/internal/repeater.h"
#include "search/internal/tpe.h"
#include "tests/search/searcher_test_util.h"

namespace tune::search {
namespace {

using Status = Suggestion::Status;

std::unique_ptr<Searcher> random_searcher(int64_t num_samples) {
  return std::make_unique<BasicVariantGenerator>(
      BasicVariantOptions{.num_samples = num_samples, .seed = 1});
}

TEST_CASE("concurrency limiter: at most max_concurrent live trials, more after completions") {
  ConcurrencyLimiter limiter(random_searcher(10), 2);
  limiter.set_search_properties("loss", Mode::kMin, testing::branin_space());
  CHECK(limiter.max_pending_trials() == 2);
  CHECK(limiter.suggest("a").status == Status::kConfig);
  CHECK(limiter.suggest("b").status == Status::kConfig);
  CHECK(limiter.suggest("c").status == Status::kNotReady);
  const Json result{{"loss", 1.0}};
  limiter.on_trial_complete("a", &result, false);
  CHECK(limiter.suggest("c").status == Status::kConfig);
  CHECK(limiter.suggest("d").status == Status::kNotReady);

  // Restored: the same live set and the same next config.
  ConcurrencyLimiter restored(random_searcher(10), 2);
  restored.set_search_properties("loss", Mode::kMin, testing::branin_space());
  restored.restore(limiter.save());
  CHECK(restored.suggest("e").status == Status::kNotReady);
  limiter.on_trial_complete("b", &result, false);
  restored.on_trial_complete("b", &result, false);
  CHECK(limiter.suggest("e").config == restored.suggest("e").config);
  CHECK_THROWS_AS(ConcurrencyLimiter(random_searcher(1), 0), ConfigError);
}

TEST_CASE("concurrency limiter: a paused trial is not live until it runs again") {
  ConcurrencyLimiter limiter(random_searcher(10), 2);
  limiter.set_search_properties("loss", Mode::kMin, testing::branin_space());
  REQUIRE(limiter.suggest("a").status == Status::kConfig);
  REQUIRE(limiter.suggest("b").status == Status::kConfig);
  REQUIRE(limiter.suggest("c").status == Status::kNotReady);
  // Both wait at a milestone: two more may run meanwhile.
  limiter.on_trial_pause("a");
  limiter.on_trial_pause("b");
  CHECK(limiter.suggest("c").status == Status::kConfig);
  CHECK(limiter.suggest("d").status == Status::kConfig);
  CHECK(limiter.suggest("e").status == Status::kNotReady);

  // The paused ones count again once resumed; one ended while paused never does.
  limiter.on_trial_unpause("a");
  const Json result{{"loss", 1.0}};
  limiter.on_trial_complete("b", &result, false);
  limiter.on_trial_complete("c", &result, false);
  limiter.on_trial_complete("d", &result, false);
  CHECK(limiter.suggest("e").status == Status::kConfig);
  CHECK(limiter.suggest("f").status == Status::kNotReady);
  // Unknown or repeated hooks change nothing.
  limiter.on_trial_unpause("zz");
  limiter.on_trial_pause("zz");
  CHECK(limiter.suggest("f").status == Status::kNotReady);

  // Saved with a paused trial, restored: it resumes as live.
  limiter.on_trial_pause("e");
  ConcurrencyLimiter restored(random_searcher(10), 2);
  restored.set_search_properties("loss", Mode::kMin, testing::branin_space());
  restored.restore(limiter.save());
  CHECK(restored.suggest("f").status == Status::kConfig);
  restored.on_trial_unpause("e");
  CHECK(restored.suggest("g").status == Status::kNotReady);
}

TEST_CASE("concurrency limiter: state saved before pauses were tracked restores") {
  ConcurrencyLimiter limiter(random_searcher(10), 1);
  limiter.set_search_properties("loss", Mode::kMin, testing::branin_space());
  REQUIRE(limiter.suggest("a").status == Status::kConfig);
  Json state = limiter.save();
  state.erase("paused");
  ConcurrencyLimiter restored(random_searcher(10), 1);
  restored.set_search_properties("loss", Mode::kMin, testing::branin_space());
  restored.restore(state);
  CHECK(restored.suggest("b").status == Status::kNotReady);
}

TEST_CASE("repeater: each config runs k times and the inner searcher hears the mean") {
  TpeOptions o;
  o.base.num_samples = 3;
  o.base.seed = 2;
  auto tpe = std::make_unique<TpeSearcher>(o);
  TpeSearcher* inner = tpe.get();
  Repeater repeater(std::move(tpe), 3);
  repeater.set_search_properties("loss", Mode::kMin, testing::branin_space());
  std::vector<Json> configs;
  for (int i = 0; i < 3; ++i) {
    Suggestion s = repeater.suggest("t" + std::to_string(i));
    REQUIRE(s.status == Status::kConfig);
    CHECK(s.config["__trial_index__"] == i);
    configs.push_back(s.config);
  }
  configs[1].erase("__trial_index__");
  configs[2].erase("__trial_index__");
  CHECK(configs[1] == configs[2]);
  for (int i = 0; i < 3; ++i) {
    const Json result{{"loss", 1.0 + i}};
    repeater.on_trial_complete("t" + std::to_string(i), &result, false);
    CHECK(inner->observations().size() == (i < 2 ? 0u : 1u));
  }
  CHECK(inner->observations()[0].loss == doctest::Approx(2.0));
  // 3 groups of 3, then finished.
  int more = 0;
  while (repeater.suggest("m" + std::to_string(more)).status == Status::kConfig) ++more;
  CHECK(more == 6);
}

TEST_CASE("repeater: save and restore mid-group continue the same group") {
  Repeater a(random_searcher(4), 2);
  a.set_search_properties("loss", Mode::kMin, testing::branin_space());
  const Json first = a.suggest("t0").config;
  Repeater b(random_searcher(4), 2);
  b.set_search_properties("loss", Mode::kMin, testing::branin_space());
  b.restore(a.save());
  Json next = b.suggest("t1").config;
  CHECK(next["__trial_index__"] == 1);
  next["__trial_index__"] = 0;
  CHECK(next == first);
}

}  // namespace
}  // namespace tune::search
