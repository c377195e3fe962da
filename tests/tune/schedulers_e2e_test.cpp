// The schedulers of schedulers/ driving real worker processes (the tunerun
// binary running the built-in learning_curve trainable), checked through the
// experiment database: who stops where, pause and resume from checkpoints,
// and PBT's exploits. The curves are deterministic, so every expected stop
// below follows from the scheduler's definition; where order matters the
// trials run one at a time (max_concurrent_trials = 1).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>

#include "curve_experiment.h"
#include "sqlite_query.h"
#include "storage/experiment_store.h"
#include "test_util.h"
#include "tune/execution/controller.h"

using namespace tune;

namespace {

ExperimentSpec curve_spec(const test::ScratchDir& dir, const std::string& name,
                          const std::string& scheduler, Json options) {
  ExperimentSpec spec = test::curve(dir, name);
  spec.scheduler = scheduler;
  spec.scheduler_options = std::move(options);
  spec.param_space.set("speed", 0.3);
  spec.param_space.set("sleep_s", 0.002);
  return spec;
}

constexpr auto run = test::run_quietly;

// learning_curve's accuracy at iteration t.
double curve(const Json& config, int64_t t) {
  return config["ceiling"].get<double>() *
         (1 - std::exp(-config["speed"].get<double>() * static_cast<double>(t)));
}

// The trials by their (distinct) ceiling.
std::map<double, storage::TrialRecord> by_ceiling(const storage::ExperimentStore& store) {
  std::map<double, storage::TrialRecord> out;
  for (auto& trial : store.trials()) out[trial.config["ceiling"].get<double>()] = trial;
  return out;
}

// Rows in the results table over all trials. Equal to the summary's
// num_results only if no iteration was reported twice (a restart from
// scratch would report 1, 2... again; the table keeps the first row).
size_t result_rows(const storage::ExperimentStore& store) {
  size_t n = 0;
  for (const auto& trial : store.trials()) n += store.results(trial.trial_id).size();
  return n;
}

// Iterations 1..last_iteration, each once, on the trial's own curve.
void check_contiguous_curve(const storage::ExperimentStore& store,
                            const storage::TrialRecord& trial) {
  INFO(trial.trial_id);
  auto results = store.results(trial.trial_id);
  REQUIRE(static_cast<int64_t>(results.size()) == trial.last_iteration);
  for (size_t i = 0; i < results.size(); ++i) {
    CHECK(results[i].training_iteration == static_cast<int64_t>(i) + 1);
    CHECK(results[i].metrics["accuracy"].get<double>() ==
          doctest::Approx(curve(trial.config, static_cast<int64_t>(i) + 1)));
  }
}

// The trainable checkpoints every iteration, or only where the scheduler may
// act (train::should_checkpoint).
void set_checkpoints(ExperimentSpec& spec, bool only_when_asked) {
  if (only_when_asked) {
    spec.param_space.set("checkpoint_for_scheduler", true);
  } else {
    spec.param_space.set("checkpoint_every", 1);
  }
}

int64_t count_paused(const ExperimentSpec& spec, const std::string& trial_id) {
  auto rows = test::query(spec.experiment_dir() / "experiment.db",
                          fmt::format("SELECT COUNT(*) FROM trial_events WHERE trial_id = '{}' "
                                      "AND from_status = 'RUNNING' AND to_status = 'PAUSED'",
                                      trial_id));
  return std::stoll(rows.at(0).at(0));
}

}  // namespace

TEST_CASE("ASHA stops each weak trial at the first rung where it falls below the cut-off") {
  test::ScratchDir dir;
  // Rungs at grace_period * rf^k = 1, 3 (and 9 = max_t, where every trial
  // stops). Cut-off: the (1 - 1/3) quantile, linear, of the values recorded
  // at the rung before. All trials share the speed, so at every rung they
  // rank by ceiling; one at a time, in grid order, they meet:
  //   ceiling  rung 1 holds (ceilings)  cut    rung 3 holds     cut    stops at
  //   0.60     -                        -      -                -      9 (max_t)
  //   0.50     .60                      .60    stop at 1
  //   0.90     .60 .50                  .567   .60              .60    9
  //   0.65     .60 .50 .90              .70    stop at 1
  //   0.75     .60 .50 .90 .65          .675   .60 .90          .80    3
  //   0.95     + .75                    .70    .60 .90 .75      .80    9
  //   0.40     + .95                    .80    stop at 1
  //   0.85     + .40                    .75    .60 .90 .75 .95  .90    3
  // (cut-offs in ceiling units; the values are these times 1 - exp(-0.3 t)).
  ExperimentSpec spec =
      curve_spec(dir, "asha", "asha", {{"max_t", 9}, {"grace_period", 1}, {"reduction_factor", 3}});
  spec.max_concurrent_trials = 1;  // ASHA is asynchronous: the arrival order is the trial order
  spec.param_space.set("ceiling", grid_search({0.6, 0.5, 0.9, 0.65, 0.75, 0.95, 0.4, 0.85}));
  spec.param_space.set("iterations", 20);  // max_t, not the trainable, ends the survivors
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 8);
  CHECK(summary.num_errors == 0);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  const std::map<double, int64_t> expected_stop = {{0.6, 9},  {0.5, 1},  {0.9, 9}, {0.65, 1},
                                                   {0.75, 3}, {0.95, 9}, {0.4, 1}, {0.85, 3}};
  auto trials = by_ceiling(store);
  REQUIRE(trials.size() == expected_stop.size());
  for (const auto& [ceiling, stop] : expected_stop) {
    const auto& trial = trials.at(ceiling);
    INFO(trial.trial_id, " ceiling ", ceiling, ": ", trial.status_reason);
    CHECK(trial.status == TrialStatus::kTerminated);
    CHECK(trial.last_iteration == stop);
    CHECK(trial.status_reason.starts_with("stopped by scheduler AsyncHyperBand"));
    CHECK(trial.status_reason.ends_with(fmt::format("at iteration {}", stop)));
    check_contiguous_curve(store, trial);
  }
  REQUIRE(summary.best);
  CHECK(summary.best->config["ceiling"] == 0.95);  // the best trial ran to max_t
  CHECK(summary.num_results == 9 + 1 + 9 + 1 + 3 + 9 + 1 + 3);
}

namespace {

// Checkpointing every iteration, or only where the scheduler may act
// (train::should_checkpoint: its milestones), the same trials run the same
// iterations.
void check_hyperband_milestones(bool only_when_asked) {
  test::ScratchDir dir;
  // max_t = 9, eta = 3: s_max + 1 = 3 brackets per band, filled in creation
  // order. Bracket s=0 takes n0 = 3 trials and runs them to r0 = 9; bracket
  // s=1 takes n0 = ceil(3/2 * 3) = 5 trials to milestone r0 = 3, then keeps
  // the best ceil(5/3) = 2 and runs them on to 9.
  ExperimentSpec spec =
      curve_spec(dir, "hyperband", "hyperband", {{"max_t", 9}, {"reduction_factor", 3}});
  spec.param_space.set("ceiling", grid_search({0.5, 0.6, 0.7,                   // bracket s=0
                                               0.55, 0.9, 0.65, 0.95, 0.75}));  // bracket s=1
  spec.param_space.set("iterations", 20);
  set_checkpoints(spec, only_when_asked);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 8);
  CHECK(summary.num_errors == 0);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trials = by_ceiling(store);
  REQUIRE(trials.size() == 8);
  for (double ceiling : {0.5, 0.6, 0.7}) {  // s=0: no halving, straight to max_t
    const auto& trial = trials.at(ceiling);
    INFO(trial.trial_id, ": ", trial.status_reason);
    CHECK(trial.last_iteration == 9);
    CHECK(count_paused(spec, trial.trial_id) == 0);
    check_contiguous_curve(store, trial);
  }
  int64_t winners_paused = 0;
  for (double ceiling : {0.9, 0.95}) {  // the best 2 of 5 at milestone 3
    const auto& trial = trials.at(ceiling);
    INFO(trial.trial_id, ": ", trial.status_reason);
    CHECK(trial.status == TrialStatus::kTerminated);
    CHECK(trial.last_iteration == 9);
    CHECK(trial.status_reason.starts_with("stopped by scheduler HyperBand"));
    CHECK(trial.status_reason.ends_with("at iteration 9"));
    winners_paused += count_paused(spec, trial.trial_id);
    check_contiguous_curve(store, trial);  // resumed at 4, not at 1
  }
  // Only the last trial to reach the milestone goes on without pausing.
  CHECK(winners_paused >= 1);
  for (double ceiling : {0.55, 0.65, 0.75}) {  // the losers, TERMINATED by the scheduler
    const auto& trial = trials.at(ceiling);
    INFO(trial.trial_id, ": ", trial.status_reason);
    CHECK(trial.status == TrialStatus::kTerminated);
    CHECK(trial.last_iteration == 3);
    CHECK(trial.status_reason.starts_with("stopped by scheduler HyperBand"));
    CHECK(trial.status_reason.ends_with("at iteration 3"));
    check_contiguous_curve(store, trial);
  }
  // No iteration reported twice (a resume from scratch would), none lost.
  CHECK(summary.num_results == 3 * 9 + 2 * 9 + 3 * 3);
  CHECK(result_rows(store) == static_cast<size_t>(summary.num_results));
  if (only_when_asked) {
    // Checkpoints at the milestones 3 and 9 only, where HyperBand decides.
    for (const auto& [ceiling, trial] : trials) {
      for (const auto& c : store.checkpoints(trial.trial_id)) {
        INFO(trial.trial_id, " checkpoint ", c.training_iteration);
        CHECK((c.training_iteration == 3 || c.training_iteration == 9));
      }
    }
  }
}

}  // namespace

TEST_CASE("HyperBand pauses trials at a milestone, resumes the winners from their checkpoints") {
  check_hyperband_milestones(false);
}

TEST_CASE("HyperBand with checkpoints only where should_checkpoint says: the same run") {
  check_hyperband_milestones(true);
}

namespace {

// Checkpointing every iteration, or only at the perturbation points
// (train::should_checkpoint), the exploits and curves are the same.
void check_pbt_exploits(bool only_when_asked) {
  test::ScratchDir dir;
  // Two trials, one at a time, each pausing at every perturbation point
  // (every 2 iterations) to let the other run: the population advances in
  // step. The slow trial (speed 0.05) ranks bottom at iteration 2 and
  // exploits the fast one (0.3), which has a checkpoint at 2. Explored
  // speeds stay within the list, at most 0.3, so the fast trial is never
  // overtaken: it donates, never receives, and every donor checkpoint is
  // at the recipient's own iteration.
  ExperimentSpec spec = curve_spec(dir, "pbt", "pbt",
                                   {{"time_attr", "training_iteration"},
                                    {"perturbation_interval", 2},
                                    {"hyperparam_mutations", {{"speed", {0.05, 0.1, 0.2, 0.3}}}},
                                    {"seed", 7}});
  spec.max_concurrent_trials = 1;
  spec.param_space.set("ceiling", 0.9);
  spec.param_space.set("speed", grid_search({0.3, 0.05}));
  spec.param_space.set("iterations", 8);
  set_checkpoints(spec, only_when_asked);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 2);
  CHECK(summary.num_errors == 0);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trials = store.trials();
  REQUIRE(trials.size() == 2);
  const auto& donor = trials[0];
  const auto& recipient = trials[1];
  REQUIRE(donor.config["speed"] == 0.3);
  check_contiguous_curve(store, donor);  // paused and resumed, never exploited

  auto exploits = store.exploits();
  REQUIRE_FALSE(exploits.empty());
  CHECK(exploits[0].training_iteration == 2);
  CHECK(exploits[0].old_config["speed"] == 0.05);
  for (const auto& e : exploits) {
    INFO("exploit at ", e.training_iteration, ": ", e.new_config.dump());
    CHECK(e.trial_id == recipient.trial_id);
    CHECK(e.donor_id == donor.trial_id);
    CHECK(e.donor_iteration == e.training_iteration);
    CHECK(e.new_config["ceiling"] == 0.9);
    CHECK(e.new_config["speed"].get<double>() <= 0.3);
  }
  // The recipient's config is the last exploit's.
  CHECK(recipient.config == exploits.back().new_config);
  CHECK(recipient.config["speed"] != 0.05);

  // Each exploit cloned the donor's checkpoint at the donor's iteration.
  auto checkpoints = store.checkpoints(recipient.trial_id);
  for (const auto& e : exploits) {
    bool cloned = false;
    for (const auto& c : checkpoints) {
      cloned = cloned || (c.training_iteration == e.donor_iteration &&
                          c.source == "clone of " + donor.trial_id);
    }
    CHECK(cloned);
  }

  // Up to the first exploit the recipient follows its own curve; after each
  // exploit it resumes after the donor's iteration, on the explored config.
  auto results = store.results(recipient.trial_id);
  REQUIRE(results.size() == 8);
  for (size_t i = 0; i < results.size(); ++i) {
    const int64_t t = results[i].training_iteration;
    CHECK(t == static_cast<int64_t>(i) + 1);
    Json config = exploits[0].old_config;
    for (const auto& e : exploits) {
      if (e.donor_iteration < t) config = e.new_config;
    }
    INFO("iteration ", t, " config ", config.dump());
    CHECK(results[i].metrics["accuracy"].get<double>() == doctest::Approx(curve(config, t)));
    // Reported after an exploit: never at or below the cloned checkpoint.
    for (const auto& e : exploits) {
      if (results[i].timestamp > e.at) CHECK(t > e.donor_iteration);
    }
  }
  CHECK(result_rows(store) == static_cast<size_t>(summary.num_results));
  if (only_when_asked) {
    // Checkpoints only at the perturbation points 2, 4, 6 and 8.
    for (const auto& trial : trials) {
      for (const auto& c : store.checkpoints(trial.trial_id)) {
        INFO(trial.trial_id, " checkpoint ", c.training_iteration, " ", c.source);
        CHECK(c.training_iteration % 2 == 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("PBT clones the donor's checkpoint and the recipient continues on the explored config") {
  check_pbt_exploits(false);
}

TEST_CASE("PBT with checkpoints only where should_checkpoint says: the same exploits") {
  check_pbt_exploits(true);
}

TEST_CASE("schedulers that never pause ask for no checkpoint, stoppers or not") {
  // FIFO with a metric stop (every report decided on), ASHA without
  // promotion (it decides at rungs, and only stops): should_checkpoint()
  // stays false, so a trainable checkpointing where asked never does.
  const std::vector<std::pair<std::string, Json>> schedulers = {
      {"fifo", Json::object()},
      {"asha", {{"max_t", 9}, {"grace_period", 1}, {"reduction_factor", 3}}}};
  for (const auto& [name, options] : schedulers) {
    INFO(name);
    test::ScratchDir dir;
    ExperimentSpec spec = curve_spec(dir, name, name, options);
    spec.param_space.set("ceiling", grid_search({0.5, 0.9, 0.7, 0.6}));
    spec.param_space.set("iterations", 9);
    spec.stop = {{"accuracy", 0.85, StopCriterion::Comparison::kAtLeast}};
    set_checkpoints(spec, true);
    ExperimentSummary summary = run(spec);
    CHECK(summary.num_terminated == 4);
    CHECK(summary.num_errors == 0);
    auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
    for (const auto& trial : store.trials()) {
      INFO(trial.trial_id, ": ", trial.status_reason);
      CHECK(trial.last_iteration > 0);
      CHECK(store.checkpoints(trial.trial_id).empty());
    }
  }
}

TEST_CASE("the median stopping rule stops a clearly worse trial early and spares a close one") {
  test::ScratchDir dir;
  // grace_period 3, one other trial suffices. A trial that finds no other
  // at its t yields to a waiting one (a pause: hence checkpoints), as in
  // Ray, but min_time_slice lets it do so only once. One at a time:
  //   0.9 runs to 3, finds no other there and yields.
  //   0.5 at t=3: its best, 0.5 f(3), is below the median of the others'
  //     means over [3, 3], 0.9 f(3): stopped at 3.
  //   0.85 at t=3: the median of 0.9 f(3) and 0.5 f(3) is 0.7 f(3): goes on;
  //     at 4 it finds no other and yields. 0.9 resumes from 3 and, having
  //     yielded once, runs to 10; then 0.85 resumes from 4. Whenever they
  //     meet a median, it is the other's running mean over [3, t], which
  //     lags behind the trial's own best: both run to 10.
  ExperimentSpec spec = curve_spec(dir, "median", "median",
                                   {{"time_attr", "training_iteration"},
                                    {"grace_period", 3},
                                    {"min_samples_required", 1},
                                    {"min_time_slice", 1000}});
  spec.max_concurrent_trials = 1;
  spec.param_space.set("ceiling", grid_search({0.9, 0.5, 0.85}));
  spec.param_space.set("iterations", 10);
  spec.param_space.set("checkpoint_every", 1);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 3);

  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  auto trials = by_ceiling(store);
  REQUIRE(trials.size() == 3);
  CHECK(trials.at(0.9).last_iteration == 10);
  CHECK(trials.at(0.85).last_iteration == 10);
  CHECK(trials.at(0.85).status_reason == "completed after 10 iterations");
  const auto& worse = trials.at(0.5);
  INFO(worse.status_reason);
  CHECK(worse.status == TrialStatus::kTerminated);
  CHECK(worse.last_iteration == 3);
  CHECK(worse.status_reason.starts_with("stopped by scheduler MedianStoppingRule"));
  CHECK(worse.status_reason.ends_with("at iteration 3"));
  CHECK(count_paused(spec, trials.at(0.9).trial_id) == 1);
  CHECK(count_paused(spec, trials.at(0.85).trial_id) == 1);
  for (const auto& [ceiling, trial] : trials) check_contiguous_curve(store, trial);
  CHECK(result_rows(store) == static_cast<size_t>(summary.num_results));
}

namespace {

// max_t = 9, eta = 3, largest first: brackets of 9 (from 1), 5 (from 3) and
// 3 (to 9) trials. BOHB suggests one trial at a time; 10 trials fill the
// first bracket and leave the second with 1 of its 5, which halves once no
// trial is left to come. The first bracket keeps 3 of its 9 at 1 and 1 of
// those 3 at 3; the second's one trial runs on to 9. Returns how many
// trials ended at each iteration.
std::map<int64_t, int64_t> run_bohb_brackets(const test::ScratchDir& dir, const std::string& name,
                                             Json search_options) {
  ExperimentSpec spec = curve_spec(dir, name, "hyperband",
                                   {{"max_t", 9}, {"reduction_factor", 3}, {"for_bohb", true}});
  spec.search_algorithm = "bohb";
  spec.search_options = std::move(search_options);
  spec.num_samples = 10;
  spec.param_space.set("ceiling", uniform(0.5, 0.95));
  spec.param_space.set("iterations", 20);
  spec.param_space.set("checkpoint_every", 1);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 10);
  CHECK(summary.num_errors == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  std::map<int64_t, int64_t> stopped_at;
  for (const auto& trial : store.trials()) {
    INFO(trial.trial_id, ": ", trial.status_reason);
    check_contiguous_curve(store, trial);
    ++stopped_at[trial.last_iteration];
  }
  return stopped_at;
}

void check_bohb_bracket_stops(const std::map<int64_t, int64_t>& stopped_at) {
  const std::map<int64_t, int64_t> expected = {{1, 6}, {3, 2}, {9, 2}};
  CHECK_MESSAGE(
      stopped_at == expected,
      fmt::format("trials ended at each iteration: {}, expected {}", stopped_at, expected));
}

}  // namespace

TEST_CASE("BOHB with HyperBand for_bohb: the largest bracket fills first, one trial at a time") {
  test::ScratchDir dir;
  check_bohb_bracket_stops(run_bohb_brackets(dir, "bohb", Json::object()));
}

TEST_CASE("BOHB under max_concurrent 1: paused trials leave room and the bracket fills") {
  // A ConcurrencyLimiter that counted paused trials as live would let one
  // trial in, see it pause at 1 with none left to come, and halve a bracket
  // of one.
  test::ScratchDir dir;
  check_bohb_bracket_stops(run_bohb_brackets(dir, "bohb_limited", {{"max_concurrent", 1}}));
}
