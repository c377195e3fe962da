// CheckpointManager: the published checkpoints of every trial of one
// experiment: publishing what ranks staged, retention, PBT's clone (and the
// rewind it may imply), and finding them again on resume. The directory
// layout is storage/checkpoint_layout.h's; every change is recorded in the
// experiment store (the checkpoints table) in the store's open batch.
//
// Owned by the controller's event loop; not thread-safe. I/O failures throw
// tune::Error naming the path: they fail the trial whose checkpoint it is,
// not the experiment. Store failures throw StorageError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"
#include "storage/experiment_store.h"

namespace tune::storage {

struct CheckpointPolicy {
  int num_to_keep = 0;            // checkpoints kept per trial; 0: all (Ray: None)
  std::string score_attribute;    // rank kept checkpoints by this metric; "": recency
  Mode score_order = Mode::kMax;  // which scores are better (Ray: "max")
};

// One trial's published checkpoints.
struct TrialCheckpoints {
  struct Entry {
    int64_t iteration = 0;
    double score = 0;  // higher is better under the policy; NaN ranks last
  };
  std::vector<Entry> kept;         // on disk, oldest first
  int64_t latest = 0;              // iteration of the latest; 0: none
  double latest_time_total_s = 0;  // time_total_s at the latest: a resume goes on from it
  // Recorded checkpoints newer than `latest` whose directory is gone (someone
  // deleted them): the work since `latest` is lost. Newest first; set by load().
  std::vector<int64_t> missing;
};

class CheckpointManager {
 public:
  CheckpointManager(ExperimentStore& store, CheckpointPolicy policy)
      : store_(store), policy_(std::move(policy)) {}

  // The directory of a trial's checkpoint for `iteration`.
  static std::filesystem::path path(const std::filesystem::path& trial_dir, int64_t iteration);

  // Publishes the files the ranks staged for `iteration` as the trial's
  // latest checkpoint, records it, and keeps the latest plus the best
  // num_to_keep - 1 of the others (`result` gives the score).
  void publish(const std::string& trial_id, const std::filesystem::path& trial_dir,
               TrialCheckpoints& checkpoints, int64_t iteration, const Json& result, double now);

  // PBT's exploit: copies the donor's latest checkpoint into the recipient's
  // directory as its latest. When the donor's iteration is before the
  // recipient's `iteration`, the recipient is rewound: its later checkpoints
  // and results are deleted. Returns the iteration the recipient resumes at.
  int64_t clone(const std::string& donor_id, const std::filesystem::path& donor_dir,
                const TrialCheckpoints& donor, const std::string& trial_id,
                const std::filesystem::path& trial_dir, TrialCheckpoints& checkpoints,
                int64_t iteration, double now);

  // A trial's checkpoints as the store recorded them, keeping only those
  // whose directory exists (a crash may come between a retention delete and
  // its row's commit); `results` give the time at each. Recorded ones newer
  // than the latest kept are listed in `missing`.
  TrialCheckpoints load(const std::string& trial_id,
                        const std::vector<ResultRecord>& results) const;

  // Drops the trial's checkpoints whose directory is gone from `checkpoints`
  // (its latest then is the newest still there, or none) and returns their
  // iterations, newest first; empty when every one is there.
  std::vector<int64_t> drop_missing(const std::string& trial_id,
                                    const std::filesystem::path& trial_dir,
                                    TrialCheckpoints& checkpoints) const;

 private:
  void apply_retention(const std::string& trial_id, const std::filesystem::path& trial_dir,
                       TrialCheckpoints& checkpoints);
  void remove(const std::string& trial_id, const std::filesystem::path& trial_dir,
              int64_t iteration);

  ExperimentStore& store_;
  CheckpointPolicy policy_;
};

}  // namespace tune::storage
