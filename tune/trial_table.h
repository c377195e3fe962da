// TrialTable: the trials of one experiment, indexed by status, and the only
// writer of their status: every phase change goes through transition(),
// which checks it against can_transition (tune/trial_phase.h), sets the
// timestamps (started_at on the first start only, finished_at on TERMINATED
// or ERROR only) and writes the trial's row and, for a new status, its
// trial_events row, in the store's open batch.
//
// Owned by the controller's event loop; not thread-safe. Trial references
// stay valid for the table's life. Store failures throw StorageError; a
// transition the state machine forbids throws tune::Error (a bug).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "storage/experiment_store.h"
#include "tune/trial.h"

namespace tune {

class TrialTable {
 public:
  explicit TrialTable(storage::ExperimentStore& store) : store_(store) {}

  // A new PENDING trial, written with its "created" event.
  Trial& create(std::string id, int64_t index, Json config, std::filesystem::path dir, double now);

  // A trial as stored by an earlier run (resume), in its stored phase;
  // nothing is written.
  Trial& load(Trial trial);

  // Moves `trial` to `to` with `reason`, at `now` (unix seconds).
  void transition(Trial& trial, TrialPhase to, const std::string& reason, double now);
  // Changes the reason alone (why a trial waits); written only when it differs.
  void set_reason(Trial& trial, const std::string& reason);
  // Writes the trial's row as it is (its config, iteration, failures...).
  void save(const Trial& trial);

  Trial* find(const std::string& id);
  size_t size() const { return trials_.size(); }
  int64_t count(TrialStatus status) const { return by_status_[index_of(status)].size(); }
  bool all_finished() const {
    return count(TrialStatus::kTerminated) + count(TrialStatus::kError) ==
           static_cast<int64_t>(size());
  }

  // Trials in creation order (for display and summaries).
  void for_each(const std::function<void(const Trial&)>& f) const;
  // Trials of `status`, in creation order. `f` must not change their status.
  void for_each(TrialStatus status, const std::function<void(Trial&)>& f);
  // PENDING and PAUSED trials, in creation order.
  std::vector<Trial*> waiting();

 private:
  static size_t index_of(TrialStatus status) { return static_cast<size_t>(status); }
  storage::TrialRecord record_of(const Trial& t) const;
  void index(Trial& trial);
  void unindex(const Trial& trial);

  storage::ExperimentStore& store_;
  std::unordered_map<std::string, Trial> trials_;
  std::map<int64_t, Trial*> by_index_;  // creation order
  std::array<std::map<int64_t, Trial*>, 5> by_status_;
};

}  // namespace tune
