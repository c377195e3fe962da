// Pipelined reports (train/session.h): a report without a checkpoint does
// not wait for its decision; the decision takes effect at the next report,
// on every rank alike, and is never lost. Within a lease (decisions known
// ahead) no report waits at all. Reports with a checkpoint, and schedulers
// that ask for it, keep the round trip. Real controller, real
// worker processes, the counting trainable of plugin_fixture.cpp.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "curve_experiment.h"
#include "schedulers/internal/fifo.h"
#include "sqlite_query.h"
#include "storage/experiment_store.h"
#include "test_util.h"
#include "tune/builtin_stoppers.h"
#include "tune/callback.h"
#include "tune/execution/controller.h"

using namespace tune;

namespace {

ExperimentSpec counted_spec(const test::ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec = test::curve(dir, name);
  spec.metric = "t";
  spec.trainable.name = "plugin_counted";
  spec.trainable.library = TUNERUN_TEST_PLUGIN;
  spec.param_space.set("iterations", 50);
  spec.stop = {{"training_iteration", 5, StopCriterion::Comparison::kAtLeast}};
  return spec;
}

// The numbers a rank wrote to `file`, one per line.
std::vector<int64_t> lines_of(const std::filesystem::path& file) {
  std::vector<int64_t> values;
  std::ifstream in(file);
  for (int64_t v; in >> v;) values.push_back(v);
  return values;
}

std::vector<int64_t> one_to(int64_t n) {
  std::vector<int64_t> values;
  for (int64_t i = 1; i <= n; ++i) values.push_back(i);
  return values;
}

std::vector<int64_t> recorded_iterations(const ExperimentSpec& spec) {
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  REQUIRE(store.trials().size() == 1);
  std::vector<int64_t> iterations;
  for (const auto& r : store.results(store.trials()[0].trial_id)) {
    iterations.push_back(r.training_iteration);
  }
  return iterations;
}

// Pauses each trial once, at iteration `at`; FIFO otherwise (the paused
// trial resumes first), or with `new_first` pending trials before paused
// ones (so a new trial takes the waiting ranks of a paused one).
class PauseOnceAt final : public schedulers::TrialScheduler {
 public:
  explicit PauseOnceAt(int64_t at, bool new_first = false) : at_(at), new_first_(new_first) {}
  Decision on_trial_result(const schedulers::TrialView& trial, const Json& result) override {
    if (result["training_iteration"] == at_ && paused_.insert(trial.trial_id).second) {
      return Decision::kPause;
    }
    return Decision::kContinue;
  }
  int choose_trial_to_run(const std::vector<schedulers::TrialView>& candidates) override {
    for (size_t i = 0; new_first_ && i < candidates.size(); ++i) {
      if (candidates[i].status == TrialStatus::kPending) return static_cast<int>(i);
    }
    return fifo_.choose_trial_to_run(candidates);
  }
  std::string debug_string() const override { return "PauseOnceAt"; }

 private:
  int64_t at_;
  bool new_first_;
  std::set<std::string> paused_;
  schedulers::FifoScheduler fifo_;
};

// Decides on every report (no lease), and never stops or pauses.
class DecidesEveryReport final : public schedulers::TrialScheduler {
 public:
  Decision on_trial_result(const schedulers::TrialView&, const Json&) override {
    return Decision::kContinue;
  }
  int choose_trial_to_run(const std::vector<schedulers::TrialView>& candidates) override {
    return candidates.empty() ? -1 : 0;
  }
  std::string debug_string() const override { return "DecidesEveryReport"; }
};

// Holds the controller's loop at the trial's third result until its rank 0
// has computed `wanted` more iterations, or for `patience`; counts how many
// it computed meanwhile: a rank that waits for decisions computes at most
// one.
class HoldAtThirdResult final : public Callback {
 public:
  HoldAtThirdResult(std::filesystem::path computed, size_t wanted, std::chrono::seconds patience)
      : computed_(std::move(computed)), wanted_(wanted), patience_(patience) {}
  void on_trial_result(const std::string&, const Json&, const Json& result) override {
    if (result["training_iteration"] != 3) return;
    test::eventually([&] { return computed_ahead() >= wanted_; }, patience_.count());
    ahead = computed_ahead();
  }
  size_t ahead = 0;

 private:
  size_t computed_ahead() const {
    const size_t computed = lines_of(computed_).size();
    return computed > 3 ? computed - 3 : 0;
  }
  std::filesystem::path computed_;
  size_t wanted_;
  std::chrono::seconds patience_;
};

ExperimentSummary run(const ExperimentSpec& spec,
                      std::vector<std::shared_ptr<Callback>> callbacks = {}) {
  TrialController controller(
      spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0, .callbacks = std::move(callbacks)});
  return controller.run();
}

std::filesystem::path first_trial_dir(const ExperimentSpec& spec) {
  return spec.experiment_dir() / "trials" / (spec.name + "_00000");
}

}  // namespace

TEST_CASE("a stop decided on a pipelined report takes effect at the next report, on every rank") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "pipelined_stop");
  spec.trainable.num_workers = 2;
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(summary.num_errors == 0);
  // Recorded: exactly the iterations up to the stop, none after it.
  CHECK(recorded_iterations(spec) == one_to(5));
  // Computed: one more, by both ranks alike (so no rank waits in a
  // collective for a peer that stopped), and no further. The stop at
  // training_iteration 5 is known ahead: iterations 1 to 4 were leased
  // (nobody waited for their decisions), and report(6) waited for 5's.
  const auto trial_dir = first_trial_dir(spec);
  CHECK(lines_of(trial_dir / "computed_0") == one_to(6));
  CHECK(lines_of(trial_dir / "computed_1") == one_to(6));
}

TEST_CASE("without a lease report(k) returns once iteration k-1 is on disk") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "unleased_stop");
  // A stop on a metric's value cannot be known ahead: every report is decided.
  spec.stop = {{"t", 5, StopCriterion::Comparison::kAtLeast}};
  spec.param_space.set("each_report_decided", true);
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(recorded_iterations(spec) == one_to(5));
  const auto trial_dir = first_trial_dir(spec);
  CHECK(lines_of(trial_dir / "computed_0") == one_to(6));
  // The stop at 5 was heard in report(6), which threw instead of returning.
  CHECK(lines_of(trial_dir / "on_disk_0") == std::vector<int64_t>{0, 1, 2, 3, 4});
}

TEST_CASE("within a lease ranks report without waiting for the controller") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "leased");
  spec.stop.clear();  // FIFO, no stopper: nothing will ever be decided
  spec.param_space.set("iterations", 200);
  auto hold = std::make_shared<HoldAtThirdResult>(first_trial_dir(spec) / "computed_0", 100,
                                                  std::chrono::seconds(60));
  const ExperimentSummary summary = run(spec, {hold});
  CHECK(summary.num_terminated == 1);
  // The controller sat in the callback while the rank went on.
  CHECK(hold->ahead >= 100);
  CHECK(recorded_iterations(spec) == one_to(200));
}

TEST_CASE("a scheduler that decides every report holds its ranks one iteration ahead") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "unleased");
  spec.stop.clear();
  spec.param_space.set("iterations", 20);
  spec.custom_scheduler = std::make_shared<DecidesEveryReport>();
  auto hold = std::make_shared<HoldAtThirdResult>(first_trial_dir(spec) / "computed_0", 100,
                                                  std::chrono::seconds(1));
  const ExperimentSummary summary = run(spec, {hold});
  CHECK(summary.num_terminated == 1);
  CHECK(hold->ahead <= 1);
  CHECK(recorded_iterations(spec) == one_to(20));
}

TEST_CASE(
    "a stop from outside the scheduler reaches leased ranks, and every result before it stays") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "leased_budget");
  spec.stop.clear();
  spec.trainable.num_workers = 2;
  spec.param_space.set("iterations", 100000000);
  spec.stoppers = {std::make_shared<TimeoutStopper>(std::chrono::milliseconds(1500))};
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(summary.num_errors == 0);
  const auto recorded = recorded_iterations(spec);
  REQUIRE(!recorded.empty());
  CHECK(recorded == one_to(static_cast<int64_t>(recorded.size())));
  // Each rank computed every recorded iteration, then stopped (at the
  // first report after the stop arrived), long before its 10^8th.
  for (const char* file : {"computed_0", "computed_1"}) {
    const auto computed = lines_of(first_trial_dir(spec) / file);
    CHECK(computed.size() >= recorded.size());
    CHECK(computed.size() < 100000000);
  }
}

TEST_CASE("a report with a checkpoint waits for its decision: the stop lands at once") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "checkpointed_stop");
  spec.param_space.set("checkpoint_every", 1);
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(recorded_iterations(spec) == one_to(5));
  const auto trial_dir = first_trial_dir(spec);
  CHECK(lines_of(trial_dir / "computed_0") == one_to(5));
  CHECK(lines_of(trial_dir / "on_disk_0") == one_to(4));  // report(5) threw: stopped
}

TEST_CASE("a trial that ends on its own after pipelined reports records every one of them") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "pipelined_end");
  spec.stop.clear();
  spec.param_space.set("iterations", 7);
  spec.reuse_workers = true;
  spec.num_samples = 3;  // the next trial's START must not meet the last decision
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 3);
  CHECK(summary.num_errors == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  for (const auto& t : store.trials()) {
    std::vector<int64_t> iterations;
    for (const auto& r : store.results(t.trial_id)) iterations.push_back(r.training_iteration);
    CHECK(iterations == one_to(7));
  }
}

TEST_CASE("a paused trial whose ranks are kept resumes in place: nothing recomputed or reloaded") {
  test::ScratchDir dir;
  ExperimentSpec spec = counted_spec(dir, "in_place");
  spec.trainable.num_workers = 2;
  spec.stop.clear();
  spec.param_space.set("iterations", 8);
  spec.param_space.set("checkpoint_every", 2);
  // Paused on iteration 3 (pipelined): heard in report(4), where both ranks
  // wait until the trial runs again.
  spec.custom_scheduler = std::make_shared<PauseOnceAt>(3);
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(storage::ExperimentStore::open_read_only(spec.experiment_dir()).trials().at(0).error == "");
  CHECK(recorded_iterations(spec) == one_to(8));
  // The function went on from where it waited: had it restarted from
  // checkpoint 2 it would have counted from 1 again.
  const auto trial_dir = first_trial_dir(spec);
  CHECK(lines_of(trial_dir / "computed_0") == one_to(8));
  CHECK(lines_of(trial_dir / "computed_1") == one_to(8));
  const auto resumes = test::query(
      spec.experiment_dir() / "experiment.db",
      "SELECT reason FROM trial_events WHERE from_status = 'PAUSED' AND to_status = 'RUNNING'");
  CHECK(resumes == std::vector<std::vector<std::string>>{{"resumed in place at iteration 3"}});
}

TEST_CASE("with reuse_workers, a trial takes a paused one's waiting ranks, which restarts later") {
  test::ScratchDir dir;
  // learning_curve: 8 iterations, a checkpoint each, resumed from its last.
  ExperimentSpec spec = test::checkpointed_curve(dir, "taken_over");
  spec.reuse_workers = true;
  spec.max_concurrent_trials = 1;
  spec.param_space.set("speed", grid_search({0.1, 0.2, 0.3}));
  // Each trial pauses at 3 with its rank waiting in report(); the next new
  // trial's START reaches that rank, which leaves the paused trial's
  // function and runs the new one. The paused ones resume from their
  // checkpoints on the ranks that wait last.
  spec.custom_scheduler = std::make_shared<PauseOnceAt>(3, true);
  const ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 3);
  CHECK(summary.num_errors == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  for (const auto& t : store.trials()) {
    INFO(t.trial_id, " ", t.error);
    std::vector<int64_t> iterations;
    for (const auto& r : store.results(t.trial_id)) iterations.push_back(r.training_iteration);
    CHECK(iterations == one_to(8));
  }
}
