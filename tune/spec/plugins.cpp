#include "tune/spec/plugins.h"

#include <fmt/format.h>

#include "schedulers/factory.h"
#include "search/factory.h"
#include "tune/builtin_stoppers.h"
#include "tune/spec/warm_start.h"

namespace tune {

Plugins Plugins::from_spec(const ExperimentSpec& spec) {
  Plugins p;
  p.searcher =
      spec.custom_searcher
          ? spec.custom_searcher
          : std::shared_ptr<search::Searcher>(search::make_searcher(
                spec.search_algorithm, spec.search_options, {spec.num_samples, spec.seed}));
  const std::vector<Objective> objectives = spec.objectives();
  if (objectives.size() > 1) {
    p.searcher->set_objectives(objectives, spec.param_space);
  } else {
    p.searcher->set_search_properties(spec.metric, spec.mode, spec.param_space);
  }
  p.scheduler = spec.custom_scheduler
                    ? spec.custom_scheduler
                    : std::shared_ptr<schedulers::TrialScheduler>(
                          schedulers::make_scheduler(spec.scheduler, spec.scheduler_options));
  if (objectives.size() > 1) {
    p.scheduler->set_objectives(objectives);
  } else {
    p.scheduler->set_search_properties(spec.metric, spec.mode);
  }
  if (!spec.stop.empty()) p.stoppers.push_back(std::make_shared<CriteriaStopper>(spec.stop));
  p.stoppers.insert(p.stoppers.end(), spec.stoppers.begin(), spec.stoppers.end());
  return p;
}

void Plugins::warm_start(const ExperimentSpec& spec) {
  if (spec.warm_start.empty()) return;
  WarmStart warm = load_warm_start(spec.warm_start, spec.param_space, spec.seed);
  const size_t taken = searcher->warm_start(warm.trials);
  notes = std::move(warm.notes);
  notes.push_back(taken > 0
                      ? fmt::format("warm start: the searcher learns from {} of the {} trials",
                                    taken, warm.trials.size())
                      : fmt::format("warm start: the searcher takes none of the {} trials (it "
                                    "learns from no earlier trials, or none reported the metric)",
                                    warm.trials.size()));
}

}  // namespace tune
