// Drives a scheduler through a decision trace: trials by name, results as
// (trial, time, metric), with the views the controller would pass.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "schedulers/trial_scheduler.h"

namespace tune::schedulers::testing {

class Trace {
 public:
  explicit Trace(TrialScheduler& scheduler, std::string time_attr = "training_iteration",
                 std::string metric = "score")
      : s_(scheduler), time_attr_(std::move(time_attr)), metric_(std::move(metric)) {}

  void add(const std::string& id, Json config = Json::object()) {
    ids_[id] = id;
    configs_[id] = std::move(config);
    status_[id] = TrialStatus::kPending;
    s_.on_trial_add(view(id));
  }

  // The trial reports `metric` at time `t`; returns the scheduler's decision.
  Decision report(const std::string& id, double t, double metric, int64_t checkpoint = -1) {
    checkpoint_[id] = checkpoint >= 0 ? checkpoint : static_cast<int64_t>(t);
    status_[id] = TrialStatus::kRunning;
    Json result{{metric_, metric}, {time_attr_, t}, {"trial_id", id}};
    if (time_attr_ != "training_iteration") result["training_iteration"] = static_cast<int64_t>(t);
    results_[id] = result;
    const Decision d = s_.on_trial_result(view(id), result);
    if (d == Decision::kPause) status_[id] = TrialStatus::kPaused;
    if (d == Decision::kStop) {
      status_[id] = TrialStatus::kTerminated;
      s_.on_trial_remove(view(id));
    }
    return d;
  }

  // The controller ends the trials the scheduler hands over.
  std::vector<std::string> take_stops() {
    auto ids = s_.take_trials_to_stop();
    for (const auto& id : ids) {
      status_[id] = TrialStatus::kTerminated;
      s_.on_trial_remove(view(id));
    }
    return ids;
  }

  void complete(const std::string& id) {
    status_[id] = TrialStatus::kTerminated;
    s_.on_trial_complete(view(id), results_.contains(id) ? &results_[id] : nullptr);
  }

  // choose_trial_to_run over `ids` (each PENDING or PAUSED); returns the
  // chosen id or "" and, unless `peek`, marks it running as the controller
  // does when it launches the trial.
  std::string choose(const std::vector<std::string>& ids, bool peek = false) {
    std::vector<TrialView> views;
    for (const auto& id : ids) views.push_back(view(id));
    const int pick = s_.choose_trial_to_run(views);
    if (pick < 0) return "";
    if (!peek) status_[ids[pick]] = TrialStatus::kRunning;
    return ids[pick];
  }

  void set_config(const std::string& id, Json config) { configs_[id] = std::move(config); }
  const Json& config(const std::string& id) { return configs_[id]; }
  TrialStatus status(const std::string& id) { return status_[id]; }

  TrialView view(const std::string& id) {
    return {ids_[id], status_[id], configs_[id], results_.contains(id) ? &results_[id] : nullptr,
            checkpoint_[id]};
  }

 private:
  TrialScheduler& s_;
  std::string time_attr_;
  std::string metric_;
  std::map<std::string, std::string> ids_;
  std::map<std::string, Json> configs_;
  std::map<std::string, Json> results_;
  std::map<std::string, TrialStatus> status_;
  std::map<std::string, int64_t> checkpoint_;
};

constexpr Decision kContinue = Decision::kContinue;
constexpr Decision kPause = Decision::kPause;
constexpr Decision kStop = Decision::kStop;

// What a lease check saw: the decisions other than kContinue, and how many
// of those fell within a lease the scheduler had granted.
struct LeaseCheck {
  int decisions = 0;
  int inside_lease = 0;
  int pauses = 0;
  int exploits = 0;
};

// Runs `n` trials through `s` as the controller would, `slots` at a time,
// one iteration per running trial per round, each trial reporting a score
// that crosses the others' over time, up to `max_t` iterations: a paused
// trial waits for choose_trial_to_run (started anyway when nothing runs)
// and resumes at the iteration it paused at, or at its donor's checkpoint
// after an exploit (taken right after the pause, and again before the
// resume, as the controller does). Each run's lease comes from
// continues_through at its start and after every report outside it, as
// the controller grants them.
// `each_round` (when given) runs after every round of reports.
inline LeaseCheck check_leases(TrialScheduler& s, int n, int64_t max_t, size_t slots,
                               const std::function<void()>& each_round = {}) {
  Trace t(s);
  std::map<std::string, int64_t> iteration, lease;
  std::map<std::string, int> index;
  std::vector<std::string> waiting, running;
  for (int i = 0; i < n; ++i) {
    const std::string id = "t" + std::to_string(i);
    t.add(id);
    waiting.push_back(id);
    iteration[id] = 0;
    index[id] = i;
  }
  LeaseCheck check;
  auto exploit = [&](const std::string& id) {
    if (auto e = s.take_exploit(id)) {
      iteration[id] = t.view(e->donor_id).checkpoint_iteration;
      t.set_config(id, e->new_config);
      ++check.exploits;
    }
  };
  for (int round = 0; round < 100000 && (!waiting.empty() || !running.empty()); ++round) {
    for (const auto& id : t.take_stops()) std::erase(waiting, id);
    while (running.size() < slots && !waiting.empty()) {
      std::string id = t.choose(waiting);
      if (id.empty() && !running.empty()) break;
      if (id.empty()) id = waiting.front();
      std::erase(waiting, id);
      exploit(id);
      lease[id] = s.continues_through(t.view(id), iteration[id]);
      running.push_back(id);
    }
    for (const std::string& id : std::vector<std::string>(running)) {
      const int64_t step = ++iteration[id];
      const double score = std::sin(index[id] * 1.3 + static_cast<double>(step) * 0.07) +
                           0.01 * static_cast<double>(step);
      const Decision d = t.report(id, static_cast<double>(step), score);
      if (d != Decision::kContinue) {
        ++check.decisions;
        if (step <= lease[id]) ++check.inside_lease;
      }
      if (d == Decision::kPause) {
        ++check.pauses;
        exploit(id);
        waiting.push_back(id);
      } else if (d == Decision::kContinue && step < max_t) {
        if (step > lease[id]) lease[id] = s.continues_through(t.view(id), step);
        continue;
      } else if (d == Decision::kContinue) {
        t.complete(id);
      }
      std::erase(running, id);
    }
    if (each_round) each_round();
  }
  return check;
}

// A scheduler's save_parts() as the store keeps them: each write replaces
// the chunks it gives (all of them, when complete) and the head;
// assembled() is the state a resumed run reads.
class StoredParts {
 public:
  StateParts write(TrialScheduler& s) {
    StateParts parts = s.save_parts();
    if (parts.complete) chunks_.clear();
    for (const StateChunk& c : parts.chunks) chunks_[{c.pointer, c.index}] = c;
    head_ = parts.head;
    return parts;
  }
  Json assembled() const {
    std::vector<StateChunk> chunks;
    for (const auto& [key, c] : chunks_) chunks.push_back(c);
    return core::assemble_state(head_, chunks);
  }

 private:
  Json head_;
  std::map<std::pair<std::string, int64_t>, StateChunk> chunks_;
};

// Round-trips a scheduler's state through its JSON text, as an experiment
// checkpoint does.
inline void round_trip(const TrialScheduler& from, TrialScheduler& to) {
  to.restore(Json::parse(from.save().dump()));
}

}  // namespace tune::schedulers::testing
