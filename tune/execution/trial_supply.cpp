// TrialSupply (tune/execution/trial_supply.h): trials from the searcher, or from the store on
// resume.
#include "tune/execution/trial_supply.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "core/errors.h"

namespace tune {

TrialSupply::TrialSupply(const TrialParts& parts, const WindDown& wind_down)
    : parts_(parts), wind_down_(wind_down) {}

void TrialSupply::load() {
  std::vector<storage::TrialRecord> records = parts_.store.trials();
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.trial_index < b.trial_index; });
  // A trial's next run is a new attempt: one past the highest its runs
  // recorded (restarts the cluster caused count none as a failure).
  std::map<std::string, int> next_attempt;
  for (const auto& p : parts_.store.placements()) {
    int& next = next_attempt[p.trial_id];
    next = std::max(next, static_cast<int>(p.attempt) + 1);
  }
  for (const auto& r : records) {
    Trial t;
    t.id = r.trial_id;
    t.index = r.trial_index;
    t.config = r.config;
    t.phase = phase_of(r.status);
    t.status_reason = r.status_reason;
    t.dir = r.trial_dir;
    t.created_at = r.created_at;
    t.started_at = r.started_at;
    t.finished_at = r.finished_at;
    t.num_failures = r.num_failures;
    // Every failure was one attempt at least.
    t.attempt = std::max(static_cast<int>(r.num_failures), next_attempt[t.id]);
    t.error = r.error;
    const auto results = parts_.store.results(t.id);
    if (!results.empty()) {
      const auto& last = results.back();
      t.iteration = last.training_iteration;
      t.last_result = last.metrics;
      t.last_result["training_iteration"] = last.training_iteration;
      t.last_result["time_this_iter_s"] = last.time_this_iter_s;
      t.last_result["time_total_s"] = last.time_total_s;
      t.last_result["timestamp"] = last.timestamp;
      t.last_result["trial_id"] = t.id;
    }
    t.checkpoints = parts_.checkpoints.load(t.id, results);
    resume_status(parts_.trials.load(std::move(t)));
    next_index_ = std::max(next_index_, r.trial_index + 1);
  }
  if (auto state = parts_.store.state("searcher")) parts_.plugins.searcher->restore(*state);
  if (auto state = parts_.store.state("scheduler")) parts_.plugins.scheduler->restore(*state);
  if (auto state = parts_.store.state("controller")) {
    searcher_finished_ = state->value("searcher_finished", false);
  }
  parts_.log.log(
      1, "resuming {}: {} trials, {} finished", parts_.spec.name, parts_.trials.size(),
      parts_.trials.count(TrialStatus::kTerminated) + parts_.trials.count(TrialStatus::kError));
}

// What a stored trial becomes when the experiment resumes.
void TrialSupply::resume_status(Trial& t) {
  const std::string from = t.checkpoints.latest > 0
                               ? fmt::format("from checkpoint {}", t.checkpoints.latest)
                               : std::string("from scratch");
  const double now = unix_now();
  const bool runs_again = t.phase == TrialPhase::kRunning || t.phase == TrialPhase::kPaused ||
                          t.phase == TrialPhase::kPending ||
                          (t.phase == TrialPhase::kError && parts_.options.resume_errored);
  if (runs_again && !t.checkpoints.missing.empty()) {
    // Deleted since the experiment stopped: its work since the newest one
    // still there is lost.
    const int64_t gone = t.checkpoints.missing.front();
    const std::string what =
        fmt::format("checkpoint {} of trial {} is missing ({}); it resumes {}", gone, t.id,
                    storage::CheckpointManager::path(t.dir, gone).string(), from);
    parts_.log.log(0, "warning: {}", what);
    parts_.trials.note(t, what, now);
  }
  if (t.phase == TrialPhase::kRunning) {
    parts_.trials.transition(t, TrialPhase::kPaused, "experiment resumed; restarts " + from, now);
  } else if (t.phase == TrialPhase::kPaused) {
    parts_.trials.set_reason(t, "experiment resumed; restarts " + from);
  } else if (t.phase == TrialPhase::kError && parts_.options.resume_errored) {
    parts_.trials.transition(t, TrialPhase::kPaused, "resume_errored; restarts " + from, now);
  } else if (t.phase == TrialPhase::kError && parts_.options.restart_errored) {
    t.checkpoints = {};
    parts_.trials.transition(t, TrialPhase::kPending, "restart_errored; restarts from scratch",
                             now);
  }
}

void TrialSupply::save_state(bool force) {
  const auto now = clock_now();
  if (!force && now - last_state_save_ < std::chrono::seconds(1)) return;
  last_state_save_ = now;
  parts_.store.put_state("searcher", parts_.plugins.searcher->save());
  // By what changed: ASHA's rungs hold a value of every trial.
  parts_.store.put_state_parts("scheduler", parts_.plugins.scheduler->save_parts());
  // After a stop_all as after the searcher's end: a resume creates no trial.
  parts_.store.put_state("controller", {{"searcher_finished", exhausted()}});
}

std::string TrialSupply::dir_name(const std::string& id, const Json& config) const {
  if (!parts_.spec.trial_dirname) return id;
  const std::string name = parts_.spec.trial_dirname(id, config);
  const auto taken = parts_.spec.experiment_dir() / "trials" / name;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    throw ConfigError::at_key("trial_dirname_creator",
                              fmt::format("gave '{}' for trial {}: a directory name needs "
                                          "characters other than '/' and is not '.' or '..'",
                                          name, id));
  }
  if (std::filesystem::exists(taken)) {
    throw ConfigError::at_key(
        "trial_dirname_creator",
        fmt::format("gave '{}' for trial {}, the directory of an earlier trial; names must "
                    "differ per trial (include trial.trial_id)",
                    name, id));
  }
  return name;
}

void TrialSupply::create_trials() {
  // The trial rows and the searcher state that produced them commit
  // together (one batch per turn), so a resume never suggests one twice:
  // the state is saved once after the turn's trials, not once per trial
  // (a scheduler's state grows with the trials).
  bool created = false;
  try {
    while (!exhausted() && parts_.trials.count(TrialStatus::kPending) <
                               parts_.plugins.searcher->max_pending_trials()) {
      const std::string id = fmt::format("{}_{:05d}", parts_.spec.name, next_index_);
      // Timed on the steady clock, whatever clock_now() simulates: the
      // searcher's real cost, stored with the trial.
      const auto asked = std::chrono::steady_clock::now();
      search::Suggestion s = parts_.plugins.searcher->suggest(id);
      const double suggest_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
      if (s.status == search::Suggestion::Status::kFinished) {
        searcher_finished_ = true;
        break;
      }
      if (s.status == search::Suggestion::Status::kNotReady) break;
      auto dir = parts_.spec.experiment_dir() / "trials" / dir_name(id, s.config);
      Trial& trial =
          parts_.trials.create(id, next_index_++, std::move(s.config), std::move(dir), unix_now());
      parts_.store.set_trial_search_time(id, suggest_s, s.model_fit_s);
      created = true;
      // Its directory now, not on the way to its start; launch() names the
      // error if it cannot be made.
      std::error_code ignored;
      std::filesystem::create_directories(trial.dir, ignored);
      parts_.plugins.scheduler->on_trial_add(trial.view());
    }
  } catch (...) {
    if (created) save_state(true);
    throw;
  }
  if (created) save_state(true);
}

}  // namespace tune
