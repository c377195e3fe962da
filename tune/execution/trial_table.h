// TrialTable: the trials of one experiment, indexed by status, and the only
// writer of their status: every phase change goes through transition(),
// which checks it against can_transition (tune/execution/trial_phase.h), sets the
// timestamps (started_at on the first start only, finished_at on TERMINATED
// or ERROR only) and writes the trial's row and, for a new status, its
// trial_events row, in the store's open batch.
//
// Finished trials (TERMINATED, ERROR) leave the table at the next
// retire_finished(), so what the controller keeps per trial stays bounded
// however many trials an experiment runs: their history is in the store,
// the table keeps their counts and, for trials with a checkpoint (which PBT
// may clone), a slim record of id, directory and checkpoints that find()
// still returns.
//
// Owned by the controller's event loop; not thread-safe. Trial references
// stay valid until the trial is retired. Store failures throw StorageError; a
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
#include "tune/execution/trial.h"

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
  // Records `what` in trial_events without a change of status.
  void note(const Trial& trial, const std::string& what, double now);
  // Writes the trial's row as it is (its config, iteration, failures...).
  void save(const Trial& trial);

  // Removes the trials that finished since the last call and returns them
  // (for a last look: the progress table keeps the best). Call it where no
  // Trial reference is held.
  std::vector<Trial> retire_finished();

  // A live trial, or a retired one with a checkpoint (slim: id, index, dir,
  // phase and checkpoints only); null otherwise.
  Trial* find(const std::string& id);
  size_t size() const {
    return trials_.size() +
           static_cast<size_t>(retired_by_status_[index_of(TrialStatus::kTerminated)] +
                               retired_by_status_[index_of(TrialStatus::kError)]);
  }
  int64_t count(TrialStatus status) const {
    return static_cast<int64_t>(by_status_[index_of(status)].size()) +
           retired_by_status_[index_of(status)];
  }
  bool all_finished() const {
    return count(TrialStatus::kTerminated) + count(TrialStatus::kError) ==
           static_cast<int64_t>(size());
  }

  // Trials not yet retired, in creation order (for display).
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
  std::array<std::map<int64_t, Trial*>, kTrialStatusCount> by_status_;
  std::vector<std::string> finished_;  // ids to retire at the next retire_finished()
  std::unordered_map<std::string, Trial> retired_with_checkpoints_;
  std::array<int64_t, kTrialStatusCount> retired_by_status_{};  // only TERMINATED and ERROR retire
};

}  // namespace tune
