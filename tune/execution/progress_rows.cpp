// ProgressRows (tune/execution/progress_rows.h): the progress table's rows, live and retired.
#include "tune/execution/progress_rows.h"

#include <algorithm>

namespace tune {
namespace {

// How many retired trials the progress table keeps: more than it shows.
constexpr size_t kKeptFinishedRows = 64;

TrialRow row_of(const Trial& t) {
  return {
      t.id,           t.status(),
      t.config,       t.last_result,
      t.iteration,    t.last_result.is_object() ? t.last_result.value("time_total_s", 0.0) : 0.0,
      t.num_failures, t.index};
}

}  // namespace

ProgressRows::ProgressRows(const ExperimentSpec& spec) : spec_(spec) {
  for (const auto& [key, domain] : spec_.param_space.searchable_domains()) {
    param_columns_.push_back(key);
  }
}

void ProgressRows::retire(const std::vector<Trial>& retired) {
  // Best first, as the progress table ranks them; ties newest first.
  auto better = [&](const TrialRow& a, const TrialRow& b) {
    if (ranks_above(a, b, spec_.metric, spec_.mode)) return true;
    return !ranks_above(b, a, spec_.metric, spec_.mode) && a.index > b.index;
  };
  for (const Trial& t : retired) {
    TrialRow row = row_of(t);
    auto at = std::upper_bound(finished_rows_.begin(), finished_rows_.end(), row, better);
    if (finished_rows_.size() >= kKeptFinishedRows && at == finished_rows_.end()) continue;
    finished_rows_.insert(at, std::move(row));
    if (finished_rows_.size() > kKeptFinishedRows) finished_rows_.pop_back();
  }
}

ProgressSnapshot ProgressRows::snapshot(const TrialTable& trials, double elapsed_s) const {
  ProgressSnapshot snap{spec_.name, elapsed_s, spec_.metric, spec_.mode, param_columns_, {}, {}};
  trials.for_each([&](const Trial& t) { snap.trials.push_back(row_of(t)); });
  for (const TrialRow& r : finished_rows_) snap.trials.push_back(r);
  std::stable_sort(snap.trials.begin(), snap.trials.end(),
                   [](const TrialRow& a, const TrialRow& b) { return a.index < b.index; });
  for (TrialStatus s : {TrialStatus::kTerminated, TrialStatus::kError}) {
    const int64_t shown = std::count_if(snap.trials.begin(), snap.trials.end(),
                                        [&](const TrialRow& r) { return r.status == s; });
    if (trials.count(s) > shown) snap.omitted[s] = trials.count(s) - shown;
  }
  return snap;
}

}  // namespace tune
