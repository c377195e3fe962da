// TrialHooks (tune/execution/trial_hooks.h): what the plug-ins, callbacks and run log hear.
#include "tune/execution/trial_hooks.h"

#include <fmt/format.h>

namespace tune {

TrialHooks::TrialHooks(const TrialParts& parts) : parts_(parts) {}

void TrialHooks::unpausing(const Trial& trial) {
  parts_.plugins.searcher->on_trial_unpause(trial.id);
}

void TrialHooks::started(const Trial& trial, GroupSource source) {
  const bool resumed_in_place = source == GroupSource::kSuspended;
  const bool resuming = trial.checkpoints.latest > 0;
  if (parts_.log.enabled(1)) {
    parts_.log.log(1, "{} RUNNING {}{}{}", trial.id, trial.config.dump(),
                   resumed_in_place ? fmt::format(" in place at iteration {}", trial.iteration)
                   : resuming       ? fmt::format(" from checkpoint {}", trial.checkpoints.latest)
                                    : "",
                   source == GroupSource::kKept         ? " (on live idle ranks)"
                   : source == GroupSource::kPrestarted ? " (on prestarted ranks)"
                   : source == GroupSource::kHandedOver ? " (on ranks it was handed to ahead)"
                                                        : "");
  }
  for (auto& cb : parts_.options.callbacks) cb->on_trial_start(trial.id, trial.config);
}

void TrialHooks::result(const Trial& trial) {
  parts_.plugins.searcher->on_trial_result(trial.id, trial.last_result);
  for (auto& cb : parts_.options.callbacks) {
    cb->on_trial_result(trial.id, trial.config, trial.last_result);
  }
}

void TrialHooks::paused(const Trial& trial, const std::string& reason) {
  parts_.log.log(1, "{} PAUSED: {}", trial.id, reason);
  parts_.plugins.searcher->on_trial_pause(trial.id);
}

void TrialHooks::ended(const Trial& trial) {
  if (trial.phase == TrialPhase::kTerminated) {
    parts_.plugins.scheduler->on_trial_complete(trial.view(), trial.last_result_or_null());
    std::string metric;
    if (!parts_.spec.metric.empty() && trial.last_result.contains(parts_.spec.metric)) {
      metric =
          fmt::format(", {}={}", parts_.spec.metric, trial.last_result[parts_.spec.metric].dump());
    }
    parts_.log.log(1, "{} TERMINATED: {}{}", trial.id, trial.status_reason, metric);
    for (auto& cb : parts_.options.callbacks) {
      cb->on_trial_complete(trial.id, trial.config, trial.last_result);
    }
  } else if (trial.phase == TrialPhase::kError) {
    parts_.plugins.scheduler->on_trial_error(trial.view());
    parts_.log.log(1, "{} ERROR: {}", trial.id, trial.error);
    for (auto& cb : parts_.options.callbacks)
      cb->on_trial_error(trial.id, trial.config, trial.error);
  } else {
    return;  // paused or retried: not an end
  }
  parts_.plugins.searcher->on_trial_complete(trial.id, trial.last_result_or_null(),
                                             trial.phase == TrialPhase::kError);
}

void TrialHooks::ended_waiting(const Trial& trial, const std::string& reason) {
  parts_.plugins.scheduler->on_trial_remove(trial.view());
  parts_.plugins.searcher->on_trial_complete(trial.id, trial.last_result_or_null(), false);
  parts_.log.log(1, "{} TERMINATED while waiting: {}", trial.id, reason);
  for (auto& cb : parts_.options.callbacks) {
    cb->on_trial_complete(trial.id, trial.config, trial.last_result);
  }
}

}  // namespace tune
