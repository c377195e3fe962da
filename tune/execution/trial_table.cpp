#include "tune/execution/trial_table.h"

#include <fmt/format.h>

#include <utility>

#include "core/errors.h"

namespace tune {

Trial& TrialTable::create(std::string id, int64_t index, Json config, std::filesystem::path dir,
                          double now) {
  Trial trial;
  trial.id = std::move(id);
  trial.index = index;
  trial.config = std::move(config);
  trial.dir = std::move(dir);
  trial.created_at = now;
  trial.status_reason = "created";
  Trial& t = load(std::move(trial));
  save(t);
  return t;
}

Trial& TrialTable::load(Trial trial) {
  const std::string id = trial.id;
  auto [it, inserted] = trials_.emplace(id, std::move(trial));
  if (!inserted) throw Error(fmt::format("trial {} exists already", id));
  by_index_[it->second.index] = &it->second;
  index(it->second);
  if (is_finished(it->second.status())) finished_.push_back(id);
  return it->second;
}

void TrialTable::transition(Trial& trial, TrialPhase to, const std::string& reason, double now) {
  if (!can_transition(trial.phase, to)) {
    throw Error(fmt::format("internal: trial {} cannot go from {} to {} ({})", trial.id,
                            to_string(trial.phase), to_string(to), reason));
  }
  if (status_of(to) == trial.status()) {
    trial.phase = to;  // a phase inside RUNNING: nothing a user sees changed
    return;
  }
  unindex(trial);
  trial.phase = to;
  index(trial);
  trial.status_reason = reason;
  if (to == TrialPhase::kRunning && !trial.started_at) trial.started_at = now;
  trial.finished_at.reset();
  if (is_finished(status_of(to))) {
    trial.finished_at = now;
    finished_.push_back(trial.id);
  }
  store_.put_trial(record_of(trial), now);
}

std::vector<Trial> TrialTable::retire_finished() {
  std::vector<Trial> retired;
  for (const std::string& id : std::exchange(finished_, {})) {
    auto it = trials_.find(id);
    // Gone already, or restarted since (resume_errored makes ERROR PAUSED).
    if (it == trials_.end() || !is_finished(it->second.status())) continue;
    Trial& trial = it->second;
    unindex(trial);
    by_index_.erase(trial.index);
    ++retired_by_status_[index_of(trial.status())];
    if (trial.checkpoints.latest > 0) {
      Trial slim;
      slim.id = trial.id;
      slim.index = trial.index;
      slim.dir = trial.dir;
      slim.phase = trial.phase;
      slim.checkpoints = trial.checkpoints;
      retired_with_checkpoints_.emplace(id, std::move(slim));
    }
    retired.push_back(std::move(trial));
    trials_.erase(it);
  }
  return retired;
}

void TrialTable::set_reason(Trial& trial, const std::string& reason) {
  if (trial.status_reason == reason) return;
  trial.status_reason = reason;
  save(trial);
}

void TrialTable::note(const Trial& trial, const std::string& what, double now) {
  store_.add_trial_note(trial.id, trial.status(), what, now);
}

void TrialTable::save(const Trial& trial) { store_.put_trial(record_of(trial)); }

Trial* TrialTable::find(const std::string& id) {
  if (auto it = trials_.find(id); it != trials_.end()) return &it->second;
  auto it = retired_with_checkpoints_.find(id);
  return it == retired_with_checkpoints_.end() ? nullptr : &it->second;
}

void TrialTable::for_each(const std::function<void(const Trial&)>& f) const {
  for (const auto& [index, trial] : by_index_) f(*trial);
}

void TrialTable::for_each(TrialStatus status, const std::function<void(Trial&)>& f) {
  for (const auto& [index, trial] : by_status_[index_of(status)]) f(*trial);
}

std::vector<Trial*> TrialTable::waiting() {
  std::vector<Trial*> out;
  const auto& pending = by_status_[index_of(TrialStatus::kPending)];
  const auto& paused = by_status_[index_of(TrialStatus::kPaused)];
  out.reserve(pending.size() + paused.size());
  auto a = pending.begin();
  auto b = paused.begin();
  while (a != pending.end() || b != paused.end()) {
    if (b == paused.end() || (a != pending.end() && a->first < b->first)) {
      out.push_back((a++)->second);
    } else {
      out.push_back((b++)->second);
    }
  }
  return out;
}

storage::TrialRecord TrialTable::record_of(const Trial& t) const {
  storage::TrialRecord r;
  r.trial_id = t.id;
  r.trial_index = t.index;
  r.config = t.config;
  r.status = t.status();
  r.status_reason = t.status_reason;
  r.trial_dir = t.dir.string();
  r.created_at = t.created_at;
  r.started_at = t.started_at;
  r.finished_at = t.finished_at;
  r.last_iteration = t.iteration;
  r.num_failures = t.num_failures;
  r.error = t.status() == TrialStatus::kError ? t.error : "";
  return r;
}

void TrialTable::index(Trial& trial) { by_status_[index_of(trial.status())][trial.index] = &trial; }

void TrialTable::unindex(const Trial& trial) {
  by_status_[index_of(trial.status())].erase(trial.index);
}

}  // namespace tune
