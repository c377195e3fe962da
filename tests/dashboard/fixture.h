// A small experiment written through the real ExperimentStore, the way the
// controller writes one: ASHA-like stops, a PBT exploit, checkpoints, logs.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "schedulers/factory.h"
#include "schedulers/trial_scheduler.h"
#include "storage/experiment_store.h"
#include "tests/schedulers/trace.h"
#include "tests/tune/test_util.h"

namespace tune::test {

inline const std::string kAshaStop =
    "stopped by scheduler AsyncHyperBand at rung 2 of 3 (milestone 3): accuracy 0.2 is below "
    "the cut-off 0.3 of the 4 trials recorded there, at iteration 3";

// runs/<name>: `trials` trials maximising "accuracy" = f(lr) that report
// `iterations` results each, except every third, stopped by ASHA at 3 with
// the reason the scheduler gives (trial 11: in the older form that named
// the scheduler by its whole status line). Trial 1 exploited trial 0 at
// iteration 4. Returns the experiment dir.
inline std::filesystem::path write_experiment(const std::filesystem::path& runs,
                                              const std::string& name, int trials = 12,
                                              int iterations = 9) {
  const auto dir = runs / name;
  auto store = storage::ExperimentStore::open(dir);
  store.put_experiment(
      {.name = name,
       .metric = "accuracy",
       .mode = Mode::kMax,
       .spec = {{"sweep",
                 {{"param_space",
                   {{"lr", {{"loguniform", {1e-4, 1e-1}}}}, {"layers", {{"randint", {1, 5}}}}}},
                  {"scheduler", {{"type", "asha"}, {"reduction_factor", 3}}}}}},
       .created_at = 1000,
       .status = ExperimentStatus::kFinished});
  Json saved_rungs = Json::array();
  for (double m : {9.0, 3.0, 1.0})
    saved_rungs.push_back({{"milestone", m}, {"recorded", Json::array()}});
  Json trial_bracket = Json::object();
  for (int i = 0; i < trials; ++i) {
    const std::string id = fmt::format("{}_{:05d}", name, i);
    const double lr = std::pow(10.0, -4 + 3.0 * i / std::max(1, trials - 1));
    const bool stopped = i % 3 == 2;
    const int last = stopped ? 3 : iterations;
    const auto trial_dir = dir / "trials" / id;
    std::filesystem::create_directories(trial_dir);
    std::ofstream(trial_dir / "rank_0.log") << "starting " << id << "\nline two\n";
    store.put_trial({.trial_id = id,
                     .trial_index = i,
                     .config = {{"lr", lr}, {"layers", 1 + i % 4}, {"opt", {{"momentum", 0.9}}}},
                     .status = TrialStatus::kRunning,
                     .trial_dir = trial_dir.string(),
                     .created_at = 1000.0 + i});
    for (int t = 1; t <= last; ++t) {
      const double accuracy = (1 - std::abs(std::log10(lr) + 2.5) / 3) * (1 - std::exp(-0.5 * t));
      store.append_result({.trial_id = id,
                           .training_iteration = t,
                           .timestamp = 1000.0 + i + t,
                           .time_this_iter_s = 0.5,
                           .time_total_s = 0.5 * t,
                           .metrics = {{"accuracy", accuracy}, {"loss", 1 - accuracy}}});
      if (t == 1 || t == 3 || t == 9)
        saved_rungs[t == 1 ? 2 : t == 3 ? 1 : 0]["recorded"].push_back({id, accuracy});
    }
    store.add_checkpoint({.trial_id = id,
                          .training_iteration = last,
                          .path = (trial_dir / "checkpoint_000001").string(),
                          .created_at = 1010});
    trial_bracket[id] = 0;
    const std::string reason =
        !stopped ? "done"
        : i == 11
            ? "stopped by scheduler AsyncHyperBand: num_stopped=1; Bracket: | Iter 9.000: None "
              "| Iter 3.000: 0.5 at iteration 3"
            : kAshaStop;
    store.set_trial_status(id, TrialStatus::kTerminated, reason, 1020.0 + i);
  }
  store.put_state("scheduler",
                  {{"brackets", Json::array({saved_rungs})}, {"trial_bracket", trial_bracket}});
  if (trials > 1) {
    store.add_exploit({.trial_id = fmt::format("{}_{:05d}", name, 1),
                       .donor_id = fmt::format("{}_{:05d}", name, 0),
                       .training_iteration = 4,
                       .donor_iteration = 3,
                       .old_config = {{"lr", 0.1}},
                       .new_config = {{"lr", 0.12}},
                       .at = 1005});
  }
  store.flush();
  return dir;
}

// runs/<name>: asynchronous HyperBand (max_t 9, eta 3) maximising
// "accuracy", as the sweep names it and with the state the real scheduler
// saved after 8 trials reported accuracy 0.1 * index at iteration 1.
inline std::filesystem::path write_async_hyperband(const std::filesystem::path& runs,
                                                   const std::string& name) {
  const auto dir = runs / name;
  const Json options{{"asynchronous", true}, {"max_t", 9}, {"seed", 2}};
  auto scheduler = schedulers::make_scheduler("hyperband", options);
  scheduler->set_search_properties("accuracy", Mode::kMax);
  schedulers::testing::Trace trace(*scheduler, "training_iteration", "accuracy");
  auto store = storage::ExperimentStore::open(dir);
  Json sweep_scheduler = options;
  sweep_scheduler["type"] = "hyperband";
  store.put_experiment({.name = name,
                        .metric = "accuracy",
                        .mode = Mode::kMax,
                        .spec = {{"sweep", {{"scheduler", sweep_scheduler}}}},
                        .created_at = 1000,
                        .status = ExperimentStatus::kFinished});
  for (int i = 0; i < 8; ++i) {
    const std::string id = fmt::format("{}_{:05d}", name, i);
    store.put_trial({.trial_id = id,
                     .trial_index = i,
                     .config = {{"lr", 0.1}},
                     .status = TrialStatus::kRunning,
                     .trial_dir = (dir / "trials" / id).string(),
                     .created_at = 1000.0 + i});
    store.append_result({.trial_id = id,
                         .training_iteration = 1,
                         .timestamp = 1001.0 + i,
                         .metrics = {{"accuracy", 0.1 * i}}});
    trace.add(id);
    trace.report(id, 1, 0.1 * i);
  }
  store.put_state("scheduler", scheduler->save());
  store.flush();
  return dir;
}

// runs/<name>: synchronous HyperBand (max_t 9, eta 3) maximising "score",
// driven as the controller would: trials h0..h2 fill bracket s=0 and run to
// 9; h3..h7 fill bracket s=1, report at its first milestone 3 with scores
// 0.5 down to 0.1, and the halving keeps h3 and h4, which run to 9 while
// h5..h7 end there. Reasons are the scheduler's own.
inline std::filesystem::path write_hyperband(const std::filesystem::path& runs,
                                             const std::string& name) {
  const auto dir = runs / name;
  const Json options{{"max_t", 9}, {"reduction_factor", 3}};
  auto scheduler = schedulers::make_scheduler("hyperband", options);
  scheduler->set_search_properties("score", Mode::kMax);
  schedulers::testing::Trace trace(*scheduler);
  auto store = storage::ExperimentStore::open(dir);
  Json sweep_scheduler = options;
  sweep_scheduler["type"] = "hyperband";
  store.put_experiment({.name = name,
                        .metric = "score",
                        .mode = Mode::kMax,
                        .spec = {{"sweep", {{"scheduler", sweep_scheduler}}}},
                        .created_at = 1000,
                        .status = ExperimentStatus::kFinished});
  auto id = [&](int i) { return fmt::format("{}_h{}", name, i); };
  for (int i = 0; i < 8; ++i) {
    store.put_trial({.trial_id = id(i),
                     .trial_index = i,
                     .config = {{"x", i}},
                     .status = TrialStatus::kRunning,
                     .created_at = 1000.0 + i});
    trace.add(id(i));
  }
  // Reports iterations from..to of trial i (score falls with i), and ends it
  // with the scheduler's reason when it stops it.
  auto run = [&](int i, int from, int to) {
    const double score = 0.5 - 0.1 * (i - 3) + (i < 3 ? 1 : 0);
    Decision d = Decision::kContinue;
    for (int it = from; it <= to && d == Decision::kContinue; ++it) {
      store.append_result(
          {.trial_id = id(i), .training_iteration = it, .metrics = {{"score", score}}});
      const Json result{{"score", score}, {"training_iteration", it}, {"trial_id", id(i)}};
      d = scheduler->on_trial_result(trace.view(id(i)), result);
    }
    if (d == Decision::kStop) {
      store.set_trial_status(id(i), TrialStatus::kTerminated,
                             "stopped by scheduler " + scheduler->decision_reason(id(i)), 1100);
      scheduler->on_trial_remove(trace.view(id(i)));
    }
  };
  for (int i = 0; i < 3; ++i) run(i, 1, 9);
  for (int i = 3; i < 8; ++i) run(i, 1, 3);
  for (const std::string& loser : scheduler->take_trials_to_stop()) {
    store.set_trial_status(loser, TrialStatus::kTerminated,
                           "stopped by scheduler " + scheduler->decision_reason(loser), 1100);
    scheduler->on_trial_remove(trace.view(loser));
  }
  for (int i = 3; i < 5; ++i) run(i, 4, 9);
  store.put_state("scheduler", scheduler->save());
  store.flush();
  return dir;
}

}  // namespace tune::test
