// Failures of workers and of the controller, with real processes: restarts
// from checkpoints, heartbeat timeouts, kill -9 of the controller and
// resume, one controller per experiment, graceful interrupts.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "curve_experiment.h"
#include "storage/experiment_store.h"
#include "test_util.h"
#include "tune/execution/controller.h"

extern char** environ;

using namespace tune;

namespace {

constexpr auto curve_spec = test::checkpointed_curve;
constexpr auto run = test::run_quietly;

// Iterations 1..n, each exactly once.
void check_contiguous(const storage::ExperimentStore& store, const std::string& trial, int64_t n) {
  auto results = store.results(trial);
  REQUIRE(results.size() == static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) CHECK(results[i].training_iteration == i + 1);
}

// Starts `tunerun ARGS...` in `cwd` without waiting.
pid_t start_tunerun(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  std::vector<std::string> argv{TUNERUN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  const auto log = (cwd / "controller.log").string();
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, c_argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits until the experiment's database holds at least `n` results.
void wait_for_results(const std::filesystem::path& dir, int64_t n) {
  const bool reached = test::eventually(
      [&] {
        try {
          return storage::ExperimentStore::open_read_only(dir).num_results() >= n;
        } catch (const StorageError&) {
          return false;  // not created yet
        }
      },
      20);
  if (!reached) FAIL("the experiment never reached " << n << " results");
}

// The sweeps of the CLI's cases below: worker processes always (those
// cases are skipped where curve experiments run on simulated ranks).
const char* kSlowSweep = R"(
name = "slow"
metric = "accuracy"
mode = "max"
num_samples = 3
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 12
checkpoint_every = 2
sleep_s = 0.05
speed = { uniform = [0.05, 0.5] }
)";

// Runs `spec`, whose one trial fails once on its first attempt: it ends
// TERMINATED after one restart, every iteration recorded once.
void check_one_restart(const ExperimentSpec& spec) {
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trial = store.trials().at(0);
  CHECK(trial.num_failures == 1);
  check_contiguous(store, trial.trial_id, 8);
}

}  // namespace

TEST_CASE("a rank killed mid-trial restarts from its checkpoint within max_failures") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "crash_restart");
  spec.trainable.num_workers = 2;
  spec.param_space.set("crash_at", 5);
  spec.max_failures = 2;
  check_one_restart(spec);
}

TEST_CASE("a rank that exits cleanly without DONE fails its trial, which restarts") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "vanish");
  spec.param_space.set("vanish_at", 5);
  spec.max_failures = 1;
  check_one_restart(spec);
}

TEST_CASE("without retries the same crash ends the trial in ERROR") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "crash_error");
  spec.param_space.set("crash_at", 5);
  CHECK(run(spec).num_errors == 1);
}

TEST_CASE("a stopped rank misses heartbeats, fails its group, and the trial restarts") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "hang");
  spec.trainable.num_workers = 2;
  spec.param_space.set("hang_at", 4);
  spec.max_failures = 1;
  spec.heartbeat_timeout_s = 1.0;
  spec.heartbeat_period_s = 0.2;
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trial = store.trials().at(0);
  CHECK(trial.num_failures == 1);
  check_contiguous(store, trial.trial_id, 8);
}

TEST_CASE("fail_fast stops the experiment on the first error and leaves it resumable") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "fail_fast");
  test::stop_at_first_error(spec);
  ExperimentSummary summary = run(spec);
  CHECK(summary.interrupted);
  CHECK(summary.num_errors == 1);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  CHECK(store.experiment()->status == ExperimentStatus::kInterrupted);
  // fail_at strikes first attempts only: retried from scratch, it completes.
  ExperimentSummary after = test::resume_quietly(spec);
  CHECK(after.num_terminated == 3);
  CHECK_FALSE(after.interrupted);
}

TEST_CASE(
    "kill -9 of the controller mid-sweep, then resume: every trial once, nothing lost, each run "
    "an attempt of its own" *
    doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  dir.write("slow.toml", kSlowSweep);
  const auto experiment = dir.path() / "runs/slow";
  pid_t controller = start_tunerun({"slow.toml"}, dir.path());
  wait_for_results(experiment, 8);
  kill(controller, SIGKILL);
  wait_exit(controller);
  const int64_t before = storage::ExperimentStore::open_read_only(experiment).num_results();

  auto resume = test::run_tunerun("resume runs/slow", dir.path());
  INFO(resume.output);
  REQUIRE(resume.exit_code == 0);
  auto store = storage::ExperimentStore::open_read_only(experiment);
  auto trials = store.trials();
  CHECK(trials.size() == 3);
  for (const auto& t : trials) {
    CHECK(t.status == TrialStatus::kTerminated);
    check_contiguous(store, t.trial_id, 12);
  }
  CHECK(store.num_results() == 36);
  CHECK(before <= 36);
  // One rank per run: one placement per attempt, none repeated by the resume.
  std::map<std::string, std::vector<int64_t>> attempts;
  for (const auto& p : store.placements()) attempts[p.trial_id].push_back(p.attempt);
  bool resumed = false;
  for (auto& [trial, seen] : attempts) {
    INFO(trial);
    std::sort(seen.begin(), seen.end());
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
    resumed |= seen.size() > 1;
  }
  CHECK(resumed);  // a trial that ran before the kill ran again after it
}

TEST_CASE("kill -9 of the controller: every result a rank was told is on disk is there" *
          doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  dir.write("fast.toml", std::string(R"(
name = "fast"
metric = "t"
mode = "max"
num_samples = 1
[trainable]
name = "plugin_counted"
library = ")") + TUNERUN_TEST_PLUGIN +
                             R"("
num_workers = 2
[param_space]
iterations = 1000000
checkpoint_every = 97
each_report_decided = true
# A stop on a metric's value grants no lease: every report is acknowledged.
[stop]
t = 1000000000
)");
  const auto experiment = dir.path() / "runs/fast";
  pid_t controller = start_tunerun({"fast.toml"}, dir.path());
  wait_for_results(experiment, 3000);
  kill(controller, SIGKILL);
  wait_exit(controller);
  // The ranks die with the controller (PR_SET_PDEATHSIG): once they are
  // gone, what they were told is final.
  REQUIRE(test::eventually(
      [&] {
        return test::processes_with_env(fmt::format("TUNERUN_PARENT_PID={}", controller) + '\0')
            .empty();
      },
      10));
  auto store = storage::ExperimentStore::open_read_only(experiment);
  const auto trials = store.trials();
  REQUIRE(trials.size() == 1);
  for (const auto& t : trials) {
    for (int rank = 0; rank < 2; ++rank) {
      std::ifstream in(experiment / "trials" / t.trial_id / fmt::format("on_disk_{}", rank));
      int64_t on_disk = 0;
      for (int64_t v; in >> v;) on_disk = std::max(on_disk, v);
      INFO(t.trial_id << " rank " << rank << " was told iteration " << on_disk << " is on disk");
      CHECK(on_disk > 0);
      const auto results = store.results(t.trial_id);
      REQUIRE(static_cast<int64_t>(results.size()) >= on_disk);
      for (int64_t i = 0; i < on_disk; ++i) CHECK(results[i].training_iteration == i + 1);
    }
  }
}

TEST_CASE("a second controller on a running experiment refuses, naming the holder" *
          doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  dir.write("slow.toml", kSlowSweep);
  pid_t first = start_tunerun({"slow.toml"}, dir.path());
  wait_for_results(dir.path() / "runs/slow", 1);
  auto second = test::run_tunerun("resume runs/slow", dir.path());
  CHECK(second.exit_code != 0);
  CHECK(second.output.find(fmt::format("pid {}", first)) != std::string::npos);
  CHECK(wait_exit(first) == 0);
}

TEST_CASE("SIGINT pauses running trials at a checkpoint, exits resumable, resume finishes" *
          doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  dir.write("slow.toml", kSlowSweep);
  pid_t controller = start_tunerun({"slow.toml"}, dir.path());
  wait_for_results(dir.path() / "runs/slow", 4);
  kill(controller, SIGINT);
  CHECK(wait_exit(controller) == 130);
  {
    auto store = storage::ExperimentStore::open_read_only(dir.path() / "runs/slow");
    CHECK(store.experiment()->status == ExperimentStatus::kInterrupted);
    for (const auto& t : store.trials()) CHECK(t.status != TrialStatus::kRunning);
  }
  auto resume = test::run_tunerun("resume runs/slow", dir.path());
  REQUIRE(resume.exit_code == 0);
  auto store = storage::ExperimentStore::open_read_only(dir.path() / "runs/slow");
  for (const auto& t : store.trials()) check_contiguous(store, t.trial_id, 12);
}

TEST_CASE("SIGINT with trials handed ahead to reused ranks: resume runs each once, whole" *
          doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  // One slot, reused one-rank groups, FIFO: each trial's rank holds the
  // next one's START. Without checkpoints the interrupt kills the running
  // trial; the trial handed to its rank waits, never started.
  dir.write("handed.toml", R"(
name = "handed"
metric = "accuracy"
mode = "max"
num_samples = 6
max_concurrent_trials = 1
reuse_workers = true
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 4
sleep_s = 0.05
speed = { uniform = [0.05, 0.5] }
)");
  pid_t controller = start_tunerun({"handed.toml"}, dir.path());
  wait_for_results(dir.path() / "runs/handed", 6);
  kill(controller, SIGINT);
  CHECK(wait_exit(controller) == 130);
  std::ifstream log(dir.path() / "controller.log");
  const std::string interrupted((std::istreambuf_iterator<char>(log)), {});
  INFO(interrupted);
  CHECK(interrupted.find("warning") == std::string::npos);
  auto resume = test::run_tunerun("resume runs/handed", dir.path());
  INFO(resume.output);
  REQUIRE(resume.exit_code == 0);
  CHECK(resume.output.find("rejected") == std::string::npos);
  auto store = storage::ExperimentStore::open_read_only(dir.path() / "runs/handed");
  REQUIRE(store.trials().size() == 6);
  for (const auto& t : store.trials()) {
    CHECK(t.status == TrialStatus::kTerminated);
    CHECK(t.num_failures == 0);
    check_contiguous(store, t.trial_id, 4);
  }
}

TEST_CASE("retention keeps num_to_keep checkpoints, always the latest") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "retention");
  spec.num_to_keep = 2;
  spec.checkpoint_score_attribute = "accuracy";
  spec.checkpoint_score_order = Mode::kMin;  // keep the worst: the oldest, plus the latest
  REQUIRE(run(spec).num_terminated == 1);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trial = store.trials().at(0);
  auto kept = store.checkpoints(trial.trial_id);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].training_iteration == 1);
  CHECK(kept[1].training_iteration == 8);
  int dirs = 0;
  for (const auto& e : std::filesystem::directory_iterator(trial.trial_dir)) {
    dirs += e.path().filename().string().starts_with("checkpoint_");
  }
  CHECK(dirs == 2);
}

TEST_CASE(
    "with reuse_workers a crashed group is replaced and its trial restarts from a checkpoint") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "reuse_crash");
  spec.trainable.num_workers = 2;
  spec.reuse_workers = true;
  spec.max_failures = 1;
  // The second trial's rank crashes at iteration 5 on its first attempt; the
  // others run on reused ranks before and after it.
  spec.param_space.set("crash_at", tune::grid_search({0, 5, 0, 0}));
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 4);
  CHECK(summary.num_errors == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  for (const auto& trial : store.trials()) {
    INFO(trial.trial_id);
    CHECK(trial.num_failures == (trial.config["crash_at"] == 5 ? 1 : 0));
    check_contiguous(store, trial.trial_id, 8);
  }
}
