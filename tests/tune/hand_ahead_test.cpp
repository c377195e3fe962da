// Trials handed ahead (HandAhead, tune/execution/hand_ahead.h): with reuse_workers, one-rank
// groups and a scheduler whose pick cannot change (FIFO; ASHA without
// promotion), a running trial's rank holds the next trial's START and
// starts it the moment its own trial returns, without a round trip to the
// controller. Real controller, real worker processes, the handed trainable
// of plugin_fixture.cpp.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "curve_experiment.h"
#include "sqlite_query.h"
#include "storage/experiment_store.h"
#include "test_util.h"
#include "tune/callback.h"
#include "tune/execution/controller.h"
#include "tune/stopper.h"

using namespace tune;

namespace {

ExperimentSpec handed_spec(const test::ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec = test::curve(dir, name);
  spec.metric = "t";
  spec.trainable.name = "plugin_handed";
  spec.trainable.library = TUNERUN_TEST_PLUGIN;
  spec.reuse_workers = true;
  spec.max_concurrent_trials = 1;
  spec.param_space.set("x", grid_search({1, 2, 3, 4}));
  return spec;
}

ExperimentSummary run(const ExperimentSpec& spec,
                      std::vector<std::shared_ptr<Callback>> callbacks = {}) {
  TrialController controller(
      spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0, .callbacks = std::move(callbacks)});
  return controller.run();
}

// How many trials' functions have started (each writes `started`).
int started_trials(const ExperimentSpec& spec) {
  int n = 0;
  for (const auto& trial : std::filesystem::directory_iterator(spec.experiment_dir() / "trials")) {
    n += std::filesystem::exists(trial.path() / "started");
  }
  return n;
}

// Holds the controller's loop inside the first trial's last result until a
// second trial's function has started, or for `patience`.
class HoldAtFirstLastResult final : public Callback {
 public:
  HoldAtFirstLastResult(const ExperimentSpec& spec, int64_t last) : spec_(spec), last_(last) {}
  void on_trial_result(const std::string& trial_id, const Json&, const Json& result) override {
    if (held_ || result["training_iteration"] != last_) return;
    held_ = true;
    started_while_held = test::eventually([&] { return started_trials(spec_) >= 2; }, 10);
  }
  bool started_while_held = false;

 private:
  const ExperimentSpec& spec_;
  int64_t last_;
  bool held_ = false;
};

// Ends the experiment once any trial has reported.
class StopAllAtFirstResult final : public Stopper {
 public:
  bool should_stop_trial(const std::string&, const Json&) override {
    seen_ = true;
    return false;
  }
  bool stop_all() override { return seen_; }
  std::string reason() const override { return "enough seen"; }

 private:
  bool seen_ = false;
};

// Why the trial last became RUNNING, from its trial_events rows.
std::string running_reason(const ExperimentSpec& spec, const std::string& trial_id) {
  const auto rows = test::query(spec.experiment_dir() / "experiment.db",
                                "SELECT reason FROM trial_events WHERE to_status = 'RUNNING' AND "
                                "trial_id = '" +
                                    trial_id + "' ORDER BY id");
  return rows.empty() ? "" : rows.back()[0];
}

}  // namespace

TEST_CASE("a reused rank starts the trial handed to it while the controller is busy elsewhere") {
  test::ScratchDir dir;
  ExperimentSpec spec = handed_spec(dir, "handed");
  spec.param_space.set("iterations", 2);
  spec.param_space.set("sleep_ms", 20);
  auto hold = std::make_shared<HoldAtFirstLastResult>(spec, 2);
  const ExperimentSummary summary = run(spec, {hold});
  // The second trial's function ran while the controller was still inside
  // the first one's last result: its START was with the rank already.
  CHECK(hold->started_while_held);
  CHECK(summary.num_terminated == 4);
  CHECK(summary.num_errors == 0);
  CHECK(summary.rejected_messages == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  std::set<int64_t> pids;
  for (const auto& t : store.trials()) {
    INFO(t.trial_id);
    const auto results = store.results(t.trial_id);
    REQUIRE(results.size() == 2);
    CHECK(results[1].metrics["t"] == 2);
    pids.insert(results[1].metrics["pid"].get<int64_t>());
    if (t.trial_index > 0) {
      CHECK(running_reason(spec, t.trial_id).find("which had its START") != std::string::npos);
    }
  }
  CHECK(pids.size() == 1);  // one process ran them all, one after another
}

TEST_CASE("a decision on a rank's last trial that arrives once the next one runs is dropped") {
  test::ScratchDir dir;
  ExperimentSpec spec = handed_spec(dir, "late_decision");
  // The first report of a trial is decided on (no lease yet); the trial
  // returns 100 ms later, so that decision reaches its rank before DONE
  // and is read by the next trial's first report.
  spec.param_space.set("iterations", 1);
  spec.param_space.set("linger_ms", 100);
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 4);
  CHECK(summary.num_errors == 0);
  CHECK(summary.num_results == 4);
  CHECK(summary.rejected_messages == 0);
}

TEST_CASE("stop_all with a trial handed ahead: it ends TERMINATED without results") {
  test::ScratchDir dir;
  ExperimentSpec spec = handed_spec(dir, "handed_stop_all");
  spec.param_space.set("iterations", 3);
  spec.param_space.set("sleep_ms", 50);
  spec.stoppers = {std::make_shared<StopAllAtFirstResult>()};
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 4);
  CHECK(summary.num_errors == 0);
  CHECK(summary.rejected_messages == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  const auto trials = store.trials();
  REQUIRE(trials.size() == 4);
  // The first trial stops at its first result; the one handed to its rank
  // is stopped there before it reports; the others never start.
  CHECK(store.results(trials[0].trial_id).size() == 1);
  for (size_t i = 1; i < trials.size(); ++i) {
    INFO(trials[i].trial_id);
    CHECK(store.results(trials[i].trial_id).empty());
    CHECK(trials[i].status_reason.find("enough seen") != std::string::npos);
  }
}

TEST_CASE("the trial handed to a rank that crashes runs on new ranks, its attempt unspent") {
  test::ScratchDir dir;
  ExperimentSpec spec = handed_spec(dir, "handed_crash");
  spec.param_space.set("iterations", 2);
  spec.param_space.set("sleep_ms", 20);
  spec.param_space.set("crash_on", 1);  // x = 1 exits after its first report, once
  spec.max_failures = 1;
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 4);
  CHECK(summary.num_errors == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  for (const auto& t : store.trials()) {
    INFO(t.trial_id);
    const auto results = store.results(t.trial_id);
    REQUIRE(results.size() == 2);
    CHECK(results[0].training_iteration == 1);
    CHECK(results[1].training_iteration == 2);
    CHECK(t.num_failures == (t.config["x"] == 1 ? 1 : 0));
  }
}
