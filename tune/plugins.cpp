#include "tune/plugins.h"

#include "search/factory.h"
#include "tune/stoppers.h"

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

}  // namespace tune
