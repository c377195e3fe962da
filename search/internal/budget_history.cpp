#include "search/internal/budget_history.h"

#include <algorithm>

#include "core/errors.h"

namespace tune::search::detail {

double rank_agreement(const std::vector<std::pair<double, double>>& pairs) {
  // O(n^2): the pairs are the trials at two rungs, hundreds at most.
  double concordant = 0, discordant = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (size_t j = i + 1; j < pairs.size(); ++j) {
      const double s = (pairs[i].first - pairs[j].first) * (pairs[i].second - pairs[j].second);
      concordant += s > 0;
      discordant += s < 0;
    }
  }
  return concordant + discordant > 0 ? (concordant - discordant) / (concordant + discordant) : 0;
}

void BudgetHistory::record(uint64_t trial, const std::vector<double>& x, double budget,
                           double loss) {
  Trial& t = trials_[trial];
  if (t.x.empty()) t.x = x;
  if (t.loss_at.insert_or_assign(budget, loss).second) ++counts_[budget];
}

void BudgetHistory::end(uint64_t trial) {
  const auto it = trials_.find(trial);
  if (it != trials_.end()) it->second.ended = true;
}

size_t BudgetHistory::results_at(double budget) const {
  const auto it = counts_.find(budget);
  return it == counts_.end() ? 0 : it->second;
}

size_t BudgetHistory::stopped_below(double budget) const {
  return static_cast<size_t>(std::count_if(trials_.begin(), trials_.end(), [&](const auto& kv) {
    const Trial& t = kv.second;
    return t.ended && !t.loss_at.empty() && t.loss_at.rbegin()->first < budget;
  }));
}

double BudgetHistory::agreement(double low, double high) const {
  std::vector<std::pair<double, double>> pairs;
  for (const auto& [index, t] : trials_) {
    const auto a = t.loss_at.find(low);
    const auto b = t.loss_at.find(high);
    if (a != t.loss_at.end() && b != t.loss_at.end()) pairs.emplace_back(a->second, b->second);
  }
  return std::max(0.0, rank_agreement(pairs));
}

std::vector<BudgetHistory::Result> BudgetHistory::at(double budget) const {
  std::vector<Result> out;
  for (const auto& [index, t] : trials_) {
    const auto it = t.loss_at.find(budget);
    if (it != t.loss_at.end()) out.push_back({t.x.data(), it->second});
  }
  return out;
}

std::vector<BudgetHistory::Stopped> BudgetHistory::stopped_list(double budget) const {
  std::vector<Stopped> out;
  for (const auto& [index, t] : trials_) {
    if (t.ended && !t.loss_at.empty() && t.loss_at.rbegin()->first < budget) {
      out.push_back({t.x.data(), t.loss_at.rbegin()->first});
    }
  }
  return out;
}

Json BudgetHistory::save() const {
  Json trials = Json::array();
  for (const auto& [index, t] : trials_) {
    Json results = Json::array();
    for (const auto& [budget, loss] : t.loss_at) results.push_back({budget, loss});
    trials.push_back(
        {{"index", index}, {"x", t.x}, {"results", std::move(results)}, {"ended", t.ended}});
  }
  return {{"trials", std::move(trials)}};
}

BudgetHistory BudgetHistory::restore(const Json& state, size_t dims) {
  BudgetHistory h;
  for (const Json& t : state.at("trials")) {
    Trial trial;
    trial.x = t.at("x").get<std::vector<double>>();
    if (trial.x.size() != dims) throw Error("a point has the wrong number of dimensions");
    for (const Json& r : t.at("results")) {
      if (trial.loss_at.insert_or_assign(r.at(0).get<double>(), r.at(1).get<double>()).second) {
        ++h.counts_[r.at(0).get<double>()];
      }
    }
    // States saved before trials' ends were kept have no "ended": as running.
    trial.ended = t.value("ended", false);
    h.trials_[t.at("index").get<uint64_t>()] = std::move(trial);
  }
  return h;
}

}  // namespace tune::search::detail
