// A program that uses the Tuner API, run by tuner_test.cpp: the same binary
// is the driver and, started again by fit(), every worker. It prints one
// line "RESULT_JSON {...}" with facts about the ResultGrid.
//
//   tuner_fixture SCENARIO STORAGE_PATH
//
// Scenarios: basic (grid of 4, one trial errors, one reports NaN, stop dict,
// checkpoints, callbacks), restore (restores basic's experiment), stoppers
// (a CombinedStopper with a plateau stopper), budget (num_samples = -1 and
// time_budget_s), searcher (TPE + ASHA), reuse (reuse_workers, one trial failing),
// faults (a train function throwing a non-std exception; num_workers = 0;
// a callback that throws), bohb (BOHB refused without HyperBand, run with
// asynchronous HyperBand).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <thread>

#include "train/checkpoint.h"
#include "train/session.h"
#include "tune/tuner.h"

namespace {

struct Recorder final : tune::Callback {
  tune::Json events = tune::Json::array();
  void on_trial_start(const std::string& id, const tune::Json&) override {
    events.push_back({"start", id});
  }
  void on_trial_result(const std::string& id, const tune::Json&, const tune::Json& r) override {
    events.push_back({"result", id, r["training_iteration"]});
  }
  void on_trial_complete(const std::string& id, const tune::Json&, const tune::Json&) override {
    events.push_back({"complete", id});
  }
  void on_trial_error(const std::string& id, const tune::Json&, const std::string&) override {
    events.push_back({"error", id});
  }
};

void grid_func(const tune::Config& config) {
  const auto x = config.get<int64_t>("x");
  for (int i = 1; i <= 10; ++i) {
    if (x == 4 && i == 2) throw std::runtime_error("x = 4 is not allowed");
    const double loss = x == 3 ? std::numeric_limits<double>::quiet_NaN()
                               : static_cast<double>((x - 2) * (x - 2)) + 1.0 / i;
    auto dir = train::make_checkpoint_dir();
    std::ofstream(dir / "state.txt") << i;
    train::report({{"loss", loss}, {"x", x}}, train::Checkpoint::from_directory(dir));
  }
}

void curve_func(const tune::Config& config) {
  const double x = config.get<double>("x");
  for (int i = 1; i <= 1000; ++i) {
    // Flat from iteration 3 on: a plateau stopper ends it at 5.
    train::report({{"loss", x * x + 1.0 / std::min(i, 3)}});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // each step's work: 10 s in all
  }
}

// Reports which process ran it and which trial its context names; x = 3
// fails at iteration 2. A stop at 3 iterations ends the others.
void pid_func(const tune::Config& config) {
  const auto& ctx = train::get_context();
  std::cout << "rank " << ctx.world_rank << " runs " << ctx.trial_id << std::endl;
  const auto pause = std::chrono::milliseconds(config.get<int64_t>("sleep_ms", 0));
  for (int i = 1; i <= 100; ++i) {
    if (config.get<int64_t>("x") == 3 && i == 2) throw std::runtime_error("x = 3 fails");
    std::this_thread::sleep_for(pause);  // the step's work, as long as the case asks
    train::report({{"pid", static_cast<int64_t>(getpid())},
                   {"context_trial", ctx.trial_id},
                   {"env_trial", std::getenv("TUNERUN_TRIAL_ID")},
                   {"master_port", std::getenv("MASTER_PORT")}});
  }
}

// Throws what is not a std::exception at its second iteration.
void throws_int(const tune::Config& config) {
  train::report({{"loss", 1.0}});
  throw 42;
}

struct ThrowingCallback final : tune::Callback {
  void on_trial_result(const std::string&, const tune::Json&, const tune::Json&) override {
    throw std::runtime_error("the callback broke");
  }
};

tune::Json facts(const tune::ResultGrid& grid) {
  tune::Json out = {{"size", grid.size()},
                    {"num_errors", grid.num_errors()},
                    {"num_terminated", grid.num_terminated()},
                    {"errors", grid.errors()},
                    {"experiment_path", grid.experiment_path().string()},
                    {"trials", grid.to_json()}};
  const auto& best = grid.get_best_result();
  out["best"] = {{"trial_id", best.trial_id},
                 {"config", best.config},
                 {"metrics", best.metrics},
                 {"num_results", best.results().size()},
                 {"num_checkpoints", best.best_checkpoints.size()},
                 {"checkpoint", best.checkpoint ? best.checkpoint->string() : ""}};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: tuner_fixture SCENARIO STORAGE_PATH\n";
    return 2;
  }
  const std::string scenario = argv[1];
  const std::filesystem::path storage = argv[2];
  auto recorder = std::make_shared<Recorder>();
  tune::Json out;
  if (scenario == "basic" || scenario == "restore") {
    tune::Trainable trainable{.name = "grid", .func = grid_func};
    tune::ParamSpace space{{"x", tune::grid_search({1, 2, 3, 4})}};
    tune::TuneConfig cfg{.metric = "loss", .mode = tune::Mode::kMin, .max_concurrent_trials = 2};
    tune::RunConfig run{.name = "basic",
                        .storage_path = storage,
                        .stop = std::map<std::string, double>{{"training_iteration", 4}},
                        .callbacks = {recorder},
                        .checkpoint_config = {.num_to_keep = 2},
                        .verbosity = 0};
    if (scenario == "basic") {
      out = facts(tune::Tuner(trainable, space, cfg, run).fit());
    } else {
      out["can_restore"] = tune::Tuner::can_restore(storage / "basic");
      out["can_restore_missing"] = tune::Tuner::can_restore(storage / "missing");
      out["grid"] = facts(tune::Tuner::restore(storage / "basic", trainable, space, {}, run).fit());
    }
  } else if (scenario == "stoppers") {
    auto stopper =
        std::make_shared<tune::CombinedStopper>(std::vector<std::shared_ptr<tune::Stopper>>{
            std::make_shared<tune::MaximumIterationStopper>(100),
            std::make_shared<tune::TrialPlateauStopper>(tune::TrialPlateauOptions{
                .metric = "loss", .std = 1e-9, .num_results = 3, .grace_period = 3})});
    out = facts(tune::Tuner("curve", curve_func, {{"x", tune::grid_search({1.0, 2.0})}},
                            {.metric = "loss"},
                            {.name = "stoppers",
                             .storage_path = storage,
                             .stop = stopper,
                             .callbacks = {recorder},
                             .verbosity = 0})
                    .fit());
  } else if (scenario == "budget") {
    out = facts(
        tune::Tuner(
            "curve", curve_func, {{"x", tune::uniform(-1, 1)}},
            {.metric = "loss", .num_samples = -1, .max_concurrent_trials = 2, .time_budget_s = 1.5},
            {.name = "budget", .storage_path = storage, .verbosity = 0})
            .fit());
  } else if (scenario == "reuse") {
    out = facts(tune::Tuner({.name = "pids", .func = pid_func, .num_workers = 2},
                            {{"x", tune::grid_search({1, 2, 3, 4, 5, 6})}},
                            {.metric = "pid", .max_concurrent_trials = 1, .reuse_workers = true},
                            {.name = "reuse",
                             .storage_path = storage,
                             .stop = std::map<std::string, double>{{"training_iteration", 3}},
                             .verbosity = 0})
                    .fit());
  } else if (scenario == "prestart") {
    // Fresh processes per trial, started ahead while the previous trial runs.
    out = facts(tune::Tuner({.name = "pids", .func = pid_func, .num_workers = 2},
                            {{"x", tune::grid_search({1, 2, 3, 4, 5, 6})}, {"sleep_ms", 100}},
                            {.metric = "pid", .max_concurrent_trials = 1},
                            {.name = "prestart",
                             .storage_path = storage,
                             .stop = std::map<std::string, double>{{"training_iteration", 3}},
                             .verbosity = 1})
                    .fit());
  } else if (scenario == "searcher") {
    out = facts(tune::Tuner("curve", curve_func, {{"x", tune::uniform(-1, 1)}},
                            {.metric = "loss",
                             .search_alg = tune::search::tpe({.base = {.n_startup_trials = 2}}),
                             .num_samples = 4,
                             .scheduler = tune::schedulers::asha({.max_t = 6, .grace_period = 2}),
                             .max_concurrent_trials = 2},
                            {.name = "searcher",
                             .storage_path = storage,
                             .stop =
                                 [](const std::string&, const tune::Json& r) {
                                   return r["training_iteration"].get<int64_t>() >= 6;
                                 },
                             .verbosity = 0})
                    .fit());
  } else if (scenario == "bohb") {
    // BOHB pairs with HyperBand in the C++ API as in a sweep file.
    auto bohb_under = [&](std::shared_ptr<tune::schedulers::TrialScheduler> scheduler,
                          const std::string& name) {
      return tune::Tuner("curve", curve_func, {{"x", tune::uniform(-1, 1)}},
                         {.metric = "loss",
                          .search_alg = tune::search::bohb(),
                          .num_samples = 3,
                          .scheduler = std::move(scheduler)},
                         {.name = name, .storage_path = storage, .verbosity = 0});
    };
    for (const auto& [name, scheduler] :
         {std::pair{"alone", std::shared_ptr<tune::schedulers::TrialScheduler>()},
          std::pair{"asha", tune::schedulers::asha({.max_t = 3})}}) {
      try {
        bohb_under(scheduler, name).fit();
      } catch (const tune::ConfigError& e) {
        out["refused"][name] = {{"key", e.key()}, {"message", e.message()}};
      }
      out["dir_exists"][name] = std::filesystem::exists(storage / name);
    }
    out["async_hyperband"] =
        facts(bohb_under(tune::schedulers::hyperband({.max_t = 3, .asynchronous = true}),
                         "async_hyperband")
                  .fit());
  } else if (scenario == "faults") {
    out["non_std"] = tune::Tuner("throws_int", throws_int, {}, {},
                                 {.name = "non_std", .storage_path = storage, .verbosity = 0})
                         .fit()
                         .errors();
    try {
      tune::Tuner({.name = "zero", .func = throws_int, .num_workers = 0}, {}, {},
                  {.name = "zero", .storage_path = storage, .verbosity = 0})
          .fit();
    } catch (const tune::ConfigError& e) {
      out["zero_workers"] = {{"key", e.key()}, {"message", e.message()}};
    }
    out["zero_dir_exists"] = std::filesystem::exists(storage / "zero");
    try {
      // The trainable keeps its name: a worker knows the functions registered
      // before the first fit() it reaches (tune/tuner.h's one rule).
      tune::Tuner("throws_int", throws_int, {}, {},
                  {.name = "broken_callback",
                   .storage_path = storage,
                   .callbacks = {std::make_shared<ThrowingCallback>()},
                   .verbosity = 0})
          .fit();
    } catch (const std::runtime_error& e) {
      out["callback_error"] = e.what();
    }
  } else {
    std::cerr << "unknown scenario " << scenario << "\n";
    return 2;
  }
  out["events"] = recorder->events;
  std::cout << "RESULT_JSON " << out.dump() << std::endl;
  return 0;
}
