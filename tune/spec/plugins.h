// The plug-ins of one experiment, built from its spec: the searcher (named,
// or the C++ API's object), the scheduler, and the stoppers ([stop]'s
// criteria first, then the API's objects). Throws ConfigError for options a
// plug-in refuses.
#pragma once

#include <memory>
#include <vector>

#include "schedulers/trial_scheduler.h"
#include "search/searcher.h"
#include "tune/spec/experiment.h"
#include "tune/stopper.h"

namespace tune {

struct Plugins {
  std::shared_ptr<search::Searcher> searcher;
  std::shared_ptr<schedulers::TrialScheduler> scheduler;
  std::vector<std::shared_ptr<Stopper>> stoppers;
  // What the spec's warm_start gave the searcher, for the run's log.
  std::vector<std::string> notes;

  static Plugins from_spec(const ExperimentSpec& spec);
  // Hands the searcher the trials of the spec's warm_start experiments
  // (tune/spec/warm_start.h), once, before its first suggestion. Throws
  // ConfigError (key "warm_start") for a directory without an experiment.
  void warm_start(const ExperimentSpec& spec);
};

}  // namespace tune
