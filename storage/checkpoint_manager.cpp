#include "storage/checkpoint_manager.h"

#include <algorithm>
#include <cmath>

#include "storage/checkpoint_layout.h"

namespace tune::storage {
namespace fs = std::filesystem;

fs::path CheckpointManager::path(const fs::path& trial_dir, int64_t iteration) {
  return checkpoint_dir(trial_dir, iteration);
}

void CheckpointManager::publish(const std::string& trial_id, const fs::path& trial_dir,
                                TrialCheckpoints& checkpoints, int64_t iteration,
                                const Json& result, double now) {
  const fs::path published = path(trial_dir, iteration);
  publish_checkpoint(staging_dir(trial_dir, iteration), published);
  store_.add_checkpoint({trial_id, iteration, published.string(), now, "report"});
  double score = static_cast<double>(iteration);  // recency
  if (!policy_.score_attribute.empty()) {
    auto it = result.find(policy_.score_attribute);
    score = it != result.end() && it->is_number() ? it->get<double>() : std::nan("");
    if (policy_.score_order == Mode::kMin) score = -score;
  }
  checkpoints.kept.push_back({iteration, score});
  checkpoints.latest = iteration;
  checkpoints.latest_time_total_s = result.value("time_total_s", 0.0);
  apply_retention(trial_id, trial_dir, checkpoints);
}

// Keeps the latest checkpoint (the one a resume needs) and the best
// num_to_keep - 1 of the others. PBT clones copy the donor's latest at once,
// so no clone ever needs an older one.
void CheckpointManager::apply_retention(const std::string& trial_id, const fs::path& trial_dir,
                                        TrialCheckpoints& checkpoints) {
  const size_t keep = static_cast<size_t>(policy_.num_to_keep);
  if (keep == 0 || checkpoints.kept.size() <= keep) return;
  auto others = checkpoints.kept;
  others.pop_back();
  std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
    return std::isnan(b.score) ? !std::isnan(a.score) : a.score > b.score;
  });
  for (size_t i = keep - 1; i < others.size(); ++i) {
    remove(trial_id, trial_dir, others[i].iteration);
    std::erase_if(checkpoints.kept,
                  [&](const auto& c) { return c.iteration == others[i].iteration; });
  }
}

void CheckpointManager::remove(const std::string& trial_id, const fs::path& trial_dir,
                               int64_t iteration) {
  fs::remove_all(path(trial_dir, iteration));
  store_.remove_checkpoint(trial_id, iteration);
}

int64_t CheckpointManager::clone(const std::string& donor_id, const fs::path& donor_dir,
                                 const TrialCheckpoints& donor, const std::string& trial_id,
                                 const fs::path& trial_dir, TrialCheckpoints& checkpoints,
                                 int64_t iteration, double now) {
  const int64_t at = donor.latest;
  const fs::path cloned = path(trial_dir, at);
  clone_checkpoint(path(donor_dir, at), cloned);
  store_.add_checkpoint({trial_id, at, cloned.string(), now, "clone of " + donor_id});
  if (at < iteration) {
    // Rewound to an earlier donor checkpoint: the branch after it is gone.
    store_.remove_results_after(trial_id, at);
    for (const auto& c : checkpoints.kept) {
      if (c.iteration > at) remove(trial_id, trial_dir, c.iteration);
    }
    std::erase_if(checkpoints.kept, [&](const auto& c) { return c.iteration >= at; });
  } else {
    std::erase_if(checkpoints.kept, [&](const auto& c) { return c.iteration == at; });
  }
  checkpoints.kept.push_back({at, std::nan("")});
  checkpoints.latest = at;
  return at;
}

TrialCheckpoints CheckpointManager::load(const std::string& trial_id,
                                         const std::vector<ResultRecord>& results) const {
  TrialCheckpoints checkpoints;
  for (const auto& c : store_.checkpoints(trial_id)) {
    if (!fs::is_directory(c.path)) {
      checkpoints.missing.insert(checkpoints.missing.begin(), c.training_iteration);
      continue;
    }
    checkpoints.kept.push_back({c.training_iteration, static_cast<double>(c.training_iteration)});
    checkpoints.latest = c.training_iteration;
    for (const auto& result : results) {
      if (result.training_iteration == c.training_iteration) {
        checkpoints.latest_time_total_s = result.time_total_s;
      }
    }
  }
  std::erase_if(checkpoints.missing, [&](int64_t i) { return i < checkpoints.latest; });
  return checkpoints;
}

std::vector<int64_t> CheckpointManager::drop_missing(const std::string& trial_id,
                                                     const fs::path& trial_dir,
                                                     TrialCheckpoints& checkpoints) const {
  std::vector<int64_t> gone;
  for (auto it = checkpoints.kept.rbegin(); it != checkpoints.kept.rend(); ++it) {
    if (!fs::is_directory(path(trial_dir, it->iteration))) gone.push_back(it->iteration);
  }
  if (gone.empty()) return gone;
  std::erase_if(checkpoints.kept, [&](const auto& c) {
    return std::find(gone.begin(), gone.end(), c.iteration) != gone.end();
  });
  checkpoints.latest = checkpoints.kept.empty() ? 0 : checkpoints.kept.back().iteration;
  checkpoints.latest_time_total_s = 0;
  for (const auto& result : store_.results(trial_id)) {
    if (result.training_iteration == checkpoints.latest) {
      checkpoints.latest_time_total_s = result.time_total_s;
    }
  }
  return gone;
}

}  // namespace tune::storage
