// Checkpoints through real worker processes: publishing, pause and resume,
// and PBT-style exploits, driven by small test schedulers.
#include <doctest/doctest.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "curve_experiment.h"
#include "schedulers/internal/fifo.h"
#include "sqlite_query.h"
#include "storage/experiment_store.h"
#include "test_util.h"
#include "tune/execution/controller.h"

using namespace tune;

namespace {

// Pauses each trial once, at `at`; FIFO otherwise (paused trials go first).
class PauseOnce : public schedulers::TrialScheduler {
 public:
  explicit PauseOnce(int64_t at) : at_(at) {}
  int choose_trial_to_run(const std::vector<schedulers::TrialView>& candidates) override {
    return fifo_.choose_trial_to_run(candidates);
  }
  std::string debug_string() const override { return "PauseOnce"; }
  Decision on_trial_result(const schedulers::TrialView& trial, const Json& result) override {
    if (result["training_iteration"] == at_ && paused_.insert(trial.trial_id).second) {
      return Decision::kPause;
    }
    return Decision::kContinue;
  }

 private:
  int64_t at_;
  std::set<std::string> paused_;
  schedulers::FifoScheduler fifo_;
};

// Trial 1 pauses at `at` and exploits trial 0 with speed = 0.5.
class ExploitOnce : public PauseOnce {
 public:
  explicit ExploitOnce(int64_t at) : PauseOnce(at) {}
  Decision on_trial_result(const schedulers::TrialView& trial, const Json& result) override {
    if (!trial.trial_id.ends_with("_00001")) return Decision::kContinue;
    return PauseOnce::on_trial_result(trial, result);
  }
  std::optional<schedulers::Exploit> take_exploit(const std::string& trial_id) override {
    if (!handed_out_.insert(trial_id).second) return std::nullopt;  // once, as the contract says
    Json config = donor_config;
    config["speed"] = 0.5;
    return schedulers::Exploit{trial_id.substr(0, trial_id.size() - 1) + "0", config};
  }
  Json donor_config;

 private:
  std::set<std::string> handed_out_;
};

// PauseOnce, but a new trial runs before a paused one: with reuse_workers
// it takes the paused trial's waiting ranks.
class PauseOnceNewFirst : public PauseOnce {
 public:
  using PauseOnce::PauseOnce;
  int choose_trial_to_run(const std::vector<schedulers::TrialView>& candidates) override {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].status == TrialStatus::kPending) return static_cast<int>(i);
    }
    return PauseOnce::choose_trial_to_run(candidates);
  }
};

// ExploitOnce, but the exploit is decided while the recipient waits (as
// synchronous PBT does), not when it pauses: its ranks are kept waiting in
// report() by then, and must restart from the clone instead of going on.
class LateExploit : public ExploitOnce {
 public:
  using ExploitOnce::ExploitOnce;
  std::optional<schedulers::Exploit> take_exploit(const std::string& trial_id) override {
    if (asked_.insert(trial_id).second) return std::nullopt;
    return ExploitOnce::take_exploit(trial_id);
  }

 private:
  std::set<std::string> asked_;
};

constexpr auto curve_spec = test::checkpointed_curve;
constexpr auto run = test::run_quietly;

double curve(double speed, int64_t t) { return 0.9 * (1 - std::exp(-speed * double(t))); }

}  // namespace

TEST_CASE("every reported checkpoint is published with its row, merged across ranks") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "published");
  spec.trainable.num_workers = 2;
  spec.param_space.set("checkpoint_every", 3);
  REQUIRE(run(spec).num_terminated == 1);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  const auto trial = store.trials().at(0);
  auto checkpoints = store.checkpoints(trial.trial_id);
  REQUIRE(checkpoints.size() == 2);
  CHECK(checkpoints[0].training_iteration == 3);
  CHECK(checkpoints[1].training_iteration == 6);
  for (const auto& c : checkpoints) {
    CHECK(std::filesystem::exists(std::filesystem::path(c.path) / "state.json"));
  }
  CHECK(checkpoints[1].path.ends_with("checkpoint_000006"));
  // Nothing is left staged once published.
  CHECK(std::filesystem::is_empty(std::filesystem::path(trial.trial_dir) / ".staging"));
}

TEST_CASE("a paused trial resumes from its checkpoint, not from iteration 0") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "paused");
  spec.param_space.set("speed", grid_search({0.1, 0.2}));
  spec.custom_scheduler = std::make_shared<PauseOnce>(3);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 2);
  CHECK(summary.num_results == 16);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  for (const auto& trial : store.trials()) {
    auto results = store.results(trial.trial_id);
    REQUIRE(results.size() == 8);
    for (size_t i = 0; i < results.size(); ++i) {
      CHECK(results[i].training_iteration == int64_t(i) + 1);
      CHECK(results[i].metrics["accuracy"].get<double>() ==
            doctest::Approx(curve(trial.config["speed"].get<double>(), int64_t(i) + 1)));
    }
    // time_total_s keeps growing across the pause.
    for (size_t i = 1; i < results.size(); ++i) {
      CHECK(results[i].time_total_s >= results[i - 1].time_total_s);
    }
    CHECK(trial.status == TrialStatus::kTerminated);
  }
}

TEST_CASE("an exploit clones the donor's checkpoint and the recipient continues from it") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "exploit");
  spec.max_concurrent_trials = 1;  // the donor finishes first, checkpoints 1..8
  spec.param_space.set("speed", grid_search({0.3, 0.05}));
  auto scheduler = std::make_shared<ExploitOnce>(2);
  spec.custom_scheduler = scheduler;
  // The donor's config, as the searcher will resolve it.
  scheduler->donor_config = {{"checkpoint_every", 1}, {"iterations", 8}, {"speed", 0.3}};
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 2);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto exploits = store.exploits();
  REQUIRE(exploits.size() == 1);
  CHECK(exploits[0].trial_id == "exploit_00001");
  CHECK(exploits[0].donor_id == "exploit_00000");
  CHECK(exploits[0].training_iteration == 2);
  CHECK(exploits[0].donor_iteration == 8);
  CHECK(exploits[0].old_config["speed"] == 0.05);
  CHECK(exploits[0].new_config["speed"] == 0.5);

  auto recipient = store.results("exploit_00001");
  // Its own iterations 1-2, then nothing left to run: the donor was at 8.
  REQUIRE(recipient.size() == 2);
  auto trials = store.trials();
  CHECK(trials[1].config["speed"] == 0.5);
  auto cloned = store.checkpoints("exploit_00001");
  REQUIRE_FALSE(cloned.empty());
  CHECK(cloned.back().source == "clone of exploit_00000");
}

namespace {

// The reasons of a trial's events, in order.
std::vector<std::string> event_reasons(const ExperimentSpec& spec, const std::string& trial_id) {
  std::vector<std::string> out;
  for (const auto& row : test::query(
           spec.experiment_dir() / "experiment.db",
           "SELECT reason FROM trial_events WHERE trial_id = '" + trial_id + "' ORDER BY rowid")) {
    out.push_back(row.at(0));
  }
  return out;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

}  // namespace

TEST_CASE(
    "a trial paused without a checkpoint whose ranks wait in place goes on where it stopped") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "no_checkpoints");
  spec.param_space.set("checkpoint_every", 0);
  spec.custom_scheduler = std::make_shared<PauseOnce>(2);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_errors == 0);
  CHECK(summary.num_terminated == 1);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trial = store.trials().at(0);
  CHECK(trial.error == "");
  CHECK(trial.last_iteration == 8);
  auto results = store.results(trial.trial_id);
  REQUIRE(results.size() == 8);
  for (size_t i = 0; i < results.size(); ++i)
    CHECK(results[i].training_iteration == int64_t(i) + 1);
  const auto events = event_reasons(spec, trial.trial_id);
  INFO(fmt::format("{}", fmt::join(events, " | ")));
  CHECK(any_contains(events, "paused by scheduler at iteration 2 (no checkpoint)"));
  // Its ranks waited inside report(): it went on where it stopped.
  CHECK(any_contains(events, "resumed in place at iteration 2"));
  CHECK_FALSE(any_contains(events, "restarts from scratch"));
}

TEST_CASE(
    "a trial paused without a checkpoint whose ranks another trial took restarts from scratch") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "from_scratch");
  spec.param_space.set("checkpoint_every", 0);
  spec.param_space.set("speed", grid_search({0.1, 0.2}));
  spec.reuse_workers = true;
  spec.max_concurrent_trials = 1;
  spec.custom_scheduler = std::make_shared<PauseOnceNewFirst>(3);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_errors == 0);
  CHECK(summary.num_terminated == 2);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  bool restarted = false;
  for (const auto& trial : store.trials()) {
    INFO(trial.trial_id, ": ", trial.status_reason);
    CHECK(trial.status == TrialStatus::kTerminated);
    auto results = store.results(trial.trial_id);
    // Iterations 1-3 ran twice; each is recorded once.
    REQUIRE(results.size() == 8);
    for (size_t i = 0; i < results.size(); ++i) {
      CHECK(results[i].training_iteration == int64_t(i) + 1);
    }
    const auto events = event_reasons(spec, trial.trial_id);
    INFO(fmt::format("{}", fmt::join(events, " | ")));
    CHECK(any_contains(events, "(no checkpoint)"));
    restarted = restarted || any_contains(events,
                                          "paused at iteration 3 without a checkpoint: "
                                          "restarts from scratch");
  }
  CHECK(restarted);
}

TEST_CASE("an exploit that rewinds the recipient replaces the discarded iterations") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "rewind");
  spec.max_concurrent_trials = 1;
  spec.param_space.set("checkpoint_every", 5);  // the donor's latest checkpoint: 5
  spec.param_space.set("speed", grid_search({0.3, 0.05}));
  auto scheduler = std::make_shared<ExploitOnce>(6);  // the recipient pauses at 6
  spec.custom_scheduler = scheduler;
  scheduler->donor_config = {{"checkpoint_every", 5}, {"iterations", 8}, {"speed", 0.3}};
  REQUIRE(run(spec).num_terminated == 2);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto exploits = store.exploits();
  REQUIRE(exploits.size() == 1);
  CHECK(exploits[0].training_iteration == 6);
  CHECK(exploits[0].donor_iteration == 5);
  auto results = store.results("rewind_00001");
  REQUIRE(results.size() == 8);
  for (int64_t t = 1; t <= 8; ++t) {
    const double speed = t <= 5 ? 0.05 : 0.5;  // iteration 6 ran again, explored
    CHECK(results[t - 1].training_iteration == t);
    CHECK(results[t - 1].metrics["accuracy"].get<double>() == doctest::Approx(curve(speed, t)));
  }
}

TEST_CASE("an exploit decided while the recipient waits in place restarts it from the clone") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "late_exploit");
  spec.max_concurrent_trials = 1;
  spec.param_space.set("checkpoint_every", 5);
  spec.param_space.set("speed", grid_search({0.3, 0.05}));
  auto scheduler = std::make_shared<LateExploit>(6);
  spec.custom_scheduler = scheduler;
  scheduler->donor_config = {{"checkpoint_every", 5}, {"iterations", 8}, {"speed", 0.3}};
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 2);
  CHECK(summary.num_errors == 0);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  REQUIRE(store.exploits().size() == 1);
  auto results = store.results("late_exploit_00001");
  REQUIRE(results.size() == 8);
  for (int64_t t = 1; t <= 8; ++t) {
    const double speed = t <= 5 ? 0.05 : 0.5;  // from the donor's checkpoint 5, explored
    CHECK(results[t - 1].training_iteration == t);
    CHECK(results[t - 1].metrics["accuracy"].get<double>() == doctest::Approx(curve(speed, t)));
  }
}
