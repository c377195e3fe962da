// AshaScheduler's brackets: the rungs, the values recorded at each and
// their cut-offs (asha.h says the rules); internal to asha.cpp.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "schedulers/internal/asha.h"
#include "schedulers/internal/stats.h"

namespace tune::schedulers {

// Ray's _Bracket: rungs in descending milestone order, so the first rung a
// result reaches is the highest one.
class AshaScheduler::Bracket {
 public:
  // A rung holds a value of every trial that reached it: with 100,000
  // trials a result's lookup, an arrival and a cut-off cost about what they
  // cost with ten (no scan, no sort, no move of the values).
  struct Rung {
    double milestone;
    std::vector<std::pair<std::string, double>> recorded;  // in arrival order
    std::unordered_map<std::string, double> by_trial;      // the same, by trial
    // ASHA's cut-off: the (1 - 1/rf) quantile of its values but NaN
    // (np.nanpercentile, as Ray's).
    detail::StreamingPercentile cut;

    const double* find(const std::string& id) const {
      auto it = by_trial.find(id);
      return it == by_trial.end() ? nullptr : &it->second;
    }
    void add(const std::string& id, double value) {
      recorded.emplace_back(id, value);
      by_trial.emplace(id, value);
      cut.add(value);
    }
    void clear() {
      recorded.clear();
      by_trial.clear();
      cut.clear();
    }
  };

  Bracket(double min_t, double max_t, double rf, int64_t s, bool stop_last_trials)
      : rf_(rf), stop_last_trials_(stop_last_trials) {
    // MAX_RUNGS = int(np.log(max_t / min_t) / np.log(rf) - s + 1)
    const auto max_rungs =
        static_cast<int64_t>(std::log(max_t / min_t) / std::log(rf) - static_cast<double>(s) + 1);
    for (int64_t k = max_rungs - 1; k >= 0; --k) {
      rungs_.push_back({min_t * std::pow(rf, static_cast<double>(k + s)),
                        {},
                        {},
                        detail::StreamingPercentile((1 - 1 / rf) * 100)});
    }
  }

  // The (1 - 1/rf) quantile of a rung's values; nullopt when it has none.
  std::optional<double> cutoff(const Rung& rung) const {
    if (rung.recorded.empty()) return std::nullopt;
    return rung.cut.percentile();
  }

  // Where and against what a trial was cut (scores with the sign folded in).
  struct Cut {
    size_t rung = 0;  // 1: the lowest
    double milestone = 0;
    double cutoff = 0;
    size_t recorded = 0;  // values it was the quantile of
  };

  // Ray's _Bracket.on_result, `score` with the sign folded in. On kStop,
  // `cut` (when given) says where.
  Decision on_result(const std::string& id, double t, double score, Cut* cut = nullptr) {
    Decision action = Decision::kContinue;
    for (size_t r = 0; r < rungs_.size(); ++r) {
      Rung& rung = rungs_[r];
      const bool seen = rung.find(id) != nullptr;
      // The decision to continue past this rung was made already.
      if (t >= rung.milestone && seen && !stop_last_trials_) break;
      if (t < rung.milestone || seen) continue;
      if (auto c = cutoff(rung); c && score < *c) {
        action = Decision::kStop;
        if (cut) *cut = {rungs_.size() - r, rung.milestone, *c, rung.recorded.size()};
      }
      rung.add(id, score);
      break;
    }
    return action;
  }

  // Promotion: the rung `t` reaches that has no value of `id` yet, recorded
  // now; nullopt when `t` reaches no new rung.
  std::optional<size_t> record(const std::string& id, double t, double score) {
    for (size_t r = 0; r < rungs_.size(); ++r) {
      Rung& rung = rungs_[r];
      if (t < rung.milestone) continue;
      if (rung.find(id) != nullptr) return std::nullopt;
      rung.add(id, score);
      return r;
    }
    return std::nullopt;
  }

  // The first iteration at which on_result or record may decide about `id`
  // again after its result at `iteration`: the next rung's milestone, or
  // the next iteration while a rung already reached has no value of `id`
  // (its result lacked the metric).
  int64_t next_decision(const std::string& id, int64_t iteration) const {
    int64_t next = std::numeric_limits<int64_t>::max();
    for (const Rung& rung : rungs_) {
      const auto at = static_cast<int64_t>(std::ceil(rung.milestone));
      if (at > iteration) {
        next = std::min(next, at);
      } else if (rung.find(id) == nullptr) {
        return iteration + 1;
      }
    }
    return next;
  }

  // The top floor(n / rf) trials of rung `r`, best first (NaN last; ties in
  // arrival order).
  std::vector<std::string> top(size_t r) const {
    auto ranked = rungs_[r].recorded;
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      if (std::isnan(a.second)) return false;
      if (std::isnan(b.second)) return true;
      return a.second > b.second;
    });
    const auto keep = static_cast<size_t>(std::floor(static_cast<double>(ranked.size()) / rf_));
    std::vector<std::string> ids;
    for (size_t i = 0; i < keep && i < ranked.size(); ++i) {
      if (!std::isnan(ranked[i].second)) ids.push_back(ranked[i].first);
    }
    return ids;
  }

  // `with_values` false: each rung's recorded left empty (save_parts).
  Json save(bool with_values = true) const {
    Json rungs = Json::array();
    for (const Rung& rung : rungs_) {
      Json recorded = Json::array();
      if (with_values) recorded = saved_values(rung, 0, rung.recorded.size());
      rungs.push_back({{"milestone", rung.milestone}, {"recorded", recorded}});
    }
    return rungs;
  }

  // A rung's values [from, to) as save() writes them.
  static Json saved_values(const Rung& rung, size_t from, size_t to) {
    Json recorded = Json::array();
    for (size_t i = from; i < to; ++i) {
      recorded.push_back({rung.recorded[i].first, detail::to_json(rung.recorded[i].second)});
    }
    return recorded;
  }

  void restore(const Json& rungs) {
    if (rungs.size() != rungs_.size()) {
      throw Error("ASHA restore: the saved rungs do not match the scheduler's options");
    }
    for (size_t r = 0; r < rungs_.size(); ++r) {
      rungs_[r].clear();
      for (const Json& entry : rungs[r].at("recorded")) {
        rungs_[r].add(entry.at(0).get<std::string>(), detail::double_from_json(entry.at(1)));
      }
    }
  }

  std::string debug_string() const {
    std::string out = "Bracket:";
    for (const Rung& rung : rungs_) {
      auto cut = cutoff(rung);
      out += fmt::format(" | Iter {:g}: {} recorded, cutoff {}", rung.milestone,
                         rung.recorded.size(), cut ? fmt::format("{:.6g}", *cut) : "None");
    }
    return out;
  }

  const std::vector<Rung>& rungs() const { return rungs_; }

 private:
  double rf_;
  bool stop_last_trials_;
  std::vector<Rung> rungs_;
};

}  // namespace tune::schedulers
