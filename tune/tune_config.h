// TuneConfig and RunConfig: how Tuner (tune/tuner.h) runs a sweep, as Ray
// Tune's tune.TuneConfig and RunConfig. Plain structs meant for designated
// initializers; fields are in declaration order, defaults follow Ray's:
//
//   tune::TuneConfig cfg{.metric = "loss", .mode = tune::Mode::kMin, .num_samples = 16,
//                        .scheduler = tune::schedulers::asha({.max_t = 20})};
//   tune::RunConfig run{.name = "quadratic", .stop = {{"training_iteration", 20}}};
//
// The plug-ins' factories (tune::schedulers::asha, tune::search::tpe...) come
// with it, from schedulers/factory.h and search/factory.h, so that a config
// names them in one expression.
#pragma once

#include <concepts>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/types.h"
#include "schedulers/factory.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/trial_scheduler.h"
#include "search/factory.h"
#include "search/searcher.h"
#include "search/searcher_options.h"
#include "tune/builtin_stoppers.h"
#include "tune/callback.h"
#include "tune/cluster.h"
#include "tune/progress.h"

namespace tune {

// TuneConfig::metric and mode: one value, or a list of them for several
// objectives:
//   .metric = {"accuracy", "latency_ms"}, .mode = {tune::Mode::kMax, tune::Mode::kMin}
template <class T>
class OneOrList {
 public:
  OneOrList() = default;
  template <class U>
  requires std::is_constructible_v<T, U&&> OneOrList(U&& value)  // NOLINT: implicit by design
      : values_{T(std::forward<U>(value))} {}
  OneOrList(std::initializer_list<T> values) : values_(values) {}   // NOLINT
  OneOrList(std::vector<T> values) : values_(std::move(values)) {}  // NOLINT

  const std::vector<T>& values() const { return values_; }
  bool empty() const { return values_.empty(); }

 private:
  std::vector<T> values_;
};

struct TuneConfig {
  // Ray: None; the metric schedulers, searchers and best results use. A
  // list: several objectives (search::motpe(), search::nsga2() or random
  // search; FIFO; the store's pareto_front).
  OneOrList<std::string> metric;
  // Ray: None (required with a metric); ignored without one. With several
  // objectives, one mode for all or one per metric.
  OneOrList<Mode> mode = Mode::kMin;
  // Ray: None -> random/grid search (BasicVariantGenerator). A searcher
  // object's own trial budget must not be smaller than num_samples: the
  // factories below make it unlimited, so num_samples alone decides.
  std::shared_ptr<search::Searcher> search_alg;
  // Ray: 1. With the default searcher, repeats of the grid; with search_alg,
  // trials in all. -1: until a stopper ends the experiment (use stop or
  // time_budget_s).
  int64_t num_samples = 1;
  std::shared_ptr<schedulers::TrialScheduler> scheduler;  // Ray: None -> FIFO
  int max_concurrent_trials = 0;                          // Ray: None; 0: as many as the CPUs allow
  double time_budget_s = 0;  // Ray: None; > 0 ends the experiment after this (TimeoutStopper)
  // Ray: reuse_actors (False). A trial's ranks, once done, run the next trial
  // instead of exiting: no process start, no library load. Function
  // trainables without GPUs only; others ignore it.
  bool reuse_workers = false;
  // Without reuse, start the next trial's fresh processes ahead while trials
  // run (ExperimentSpec::prestart_workers).
  bool prestart_workers = true;
  uint64_t seed = 0;  // seeds the default searcher: same seed, same configs
};

// What RunConfig::stop accepts: Ray's stop dict ({"training_iteration", 10}:
// stop once result[key] >= value), a predicate on (trial_id, result), or a
// Stopper object (tune/builtin_stoppers.h). Empty: no stop condition.
class StopCondition {
 public:
  StopCondition() = default;
  StopCondition(std::map<std::string, double> at_least);  // NOLINT: implicit by design
  template <class S>
  requires std::derived_from<S, Stopper> StopCondition(std::shared_ptr<S> stopper)
      : stopper_(std::move(stopper)) {}  // NOLINT
  template <class F>
  requires std::is_invocable_r_v<bool, F, const std::string&, const Json&> StopCondition(
      F predicate)  // NOLINT
      : stopper_(std::make_shared<FunctionStopper>(StopPredicate(std::move(predicate)))) {}

  // The condition as a stopper; null when empty.
  const std::shared_ptr<Stopper>& stopper() const { return stopper_; }
  // A stop dict's criteria (the Tuner checks their keys in every result, as
  // a sweep file's [stop]); empty for a predicate or a Stopper object.
  const std::vector<StopCriterion>& criteria() const { return criteria_; }

 private:
  std::shared_ptr<Stopper> stopper_;
  std::vector<StopCriterion> criteria_;
};

struct CheckpointConfig {
  int num_to_keep = 0;                       // Ray: None (all); 0 keeps all
  std::string checkpoint_score_attribute;    // Ray: None: keep the most recent
  Mode checkpoint_score_order = Mode::kMax;  // Ray: "max"
};

struct FailureConfig {
  int max_failures = 0;    // Ray: 0; restarts of a failed trial from its checkpoint; -1: unlimited
  bool fail_fast = false;  // Ray: False; the first trial ERROR ends the experiment (restorably)
};

struct RunConfig {
  std::string name;  // Ray: "<trainable>_<timestamp>"; the experiment directory's name
  std::filesystem::path storage_path = "runs";  // Ray: ~/ray_results
  StopCondition stop;
  std::vector<std::shared_ptr<Callback>> callbacks;
  CheckpointConfig checkpoint_config;
  FailureConfig failure_config;
  int verbosity = 1;  // Ray: 1 (its levels differ); 0 silent, 1 trial starts/ends, 2 every result
  // kAuto: a live table of the trials when stderr is a terminal (tune/progress.h).
  ProgressMode progress = ProgressMode::kAuto;
  // Where the ranks run (tune/cluster.h): launcher "auto" runs them as Slurm
  // job steps inside an allocation, given a control_address or
  // control_interface the nodes reach; on this machine elsewhere.
  ClusterSpec cluster;
};

}  // namespace tune
