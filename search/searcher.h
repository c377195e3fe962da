// Searcher: the plug-in that decides which config each new trial tries.
//
// Modelled on Ray Tune's Searcher. The controller's event loop owns it and
// calls it from one thread; it needs no locks. Hooks and when they fire:
//   set_search_properties  once, before the first suggest (one objective
//                          or none)
//   set_objectives         instead, when the experiment has several
//   warm_start             once after either, with a sweep's warm_start
//   suggest(trial_id)      when the controller has room for a new trial
//   on_trial_result        every complete iteration of a RUNNING trial
//   on_trial_complete      once, when a trial is TERMINATED or in ERROR
//   on_trial_pause         a scheduler paused a trial (PAUSED: it holds no
//                          resources and will run again, or be ended)
//   on_trial_unpause       a PAUSED trial runs again
//   save / restore         experiment checkpoint and resume
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "core/types.h"
#include "search/param_space.h"

namespace tune::search {

struct Suggestion {
  enum class Status {
    kConfig,    // `config` holds the next trial's config
    kNotReady,  // nothing now; ask again after a trial reports or completes
    kFinished,  // the searcher will never suggest again
  };
  Status status = Status::kFinished;
  Json config;  // set when status == kConfig
  // Seconds of this suggest call spent fitting the searcher's model to the
  // trials so far (ModelBasedSearcher says what each counts; NSGA-II's is
  // its selection and breeding); unset when it fitted none (random configs,
  // the start-up phase). The controller stores it with the trial, beside the
  // whole call's time.
  std::optional<double> model_fit_s;

  static Suggestion of(Json config) { return {Status::kConfig, std::move(config)}; }
  static Suggestion not_ready() { return {Status::kNotReady, {}}; }
  static Suggestion finished() { return {Status::kFinished, {}}; }
};

// A trial of an earlier experiment, for a warm start: its config (mapped
// onto this experiment's space) and its last result.
struct PriorTrial {
  Json config;
  Json result;
};

class Searcher {
 public:
  virtual ~Searcher() = default;

  // The kind, as a sweep file's [search] algorithm names it ("tpe", "bohb");
  // "custom" for a user's class. The rules that pair plug-ins (BOHB needs
  // HyperBand's brackets) and the experiment's record read it.
  virtual std::string kind() const { return "custom"; }

  // `metric` and `mode` are the experiment's; `space` the sweep's param space.
  virtual void set_search_properties(const std::string& metric, Mode mode,
                                     const ParamSpace& space) = 0;

  // Several objectives (two or more: the experiment's metric and mode
  // lists), called instead of set_search_properties. A trial's constraint
  // values, when it reports them, are the result's kConstraintsKey
  // (core/pareto.h). The
  // default refuses: a searcher that learns from one metric cannot rank
  // trials by several. Throws ConfigError (key "metric").
  virtual void set_objectives(const std::vector<Objective>& objectives, const ParamSpace& space) {
    throw ConfigError::at_key(
        "metric",
        "this searcher optimises one metric; for several objectives use the search algorithm "
        "\"motpe\", \"nsga2\" or \"gp\" (or random search)");
  }

  // Trials of earlier experiments (a sweep's warm_start), before the first
  // suggest. Model-based searchers learn from them as from their own
  // trials and suggest the best few of their configs first; others ignore
  // them. Returns how many it took: a trial whose config does not fit the
  // space, or whose result lacks an objective, is left out.
  virtual size_t warm_start(const std::vector<PriorTrial>& trials) { return 0; }

  virtual Suggestion suggest(const std::string& trial_id) = 0;

  // `result` is the full result row: user metrics plus the auto-filled
  // training_iteration, time_this_iter_s, time_total_s, timestamp, trial_id.
  virtual void on_trial_result(const std::string& trial_id, const Json& result) {}

  // `last_result` is null when the trial reported nothing; `error` is true
  // when the trial ended in ERROR.
  virtual void on_trial_complete(const std::string& trial_id, const Json* last_result, bool error) {
  }

  // A scheduler paused the trial (HyperBand at a milestone, PBT between
  // perturbations), and it runs again later. Ray's on_pause/on_unpause,
  // which TuneBOHB uses so that paused trials do not count against its
  // max_concurrent. A trial ended while paused gets on_trial_complete only.
  virtual void on_trial_pause(const std::string& trial_id) {}
  virtual void on_trial_unpause(const std::string& trial_id) {}

  // The searcher's whole state as JSON, such that restore(save()) on a fresh
  // searcher of the same kind and options yields the same next suggestions.
  virtual Json save() const = 0;
  virtual void restore(const Json& state) = 0;

  // How many trials the controller may create ahead of free resources: many
  // for searchers that do not learn from results, 1 for model-based ones.
  virtual int max_pending_trials() const { return 1; }
};

}  // namespace tune::search
