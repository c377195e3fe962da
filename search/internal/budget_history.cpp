#include "search/internal/budget_history.h"

#include <algorithm>
#include <cmath>

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
  const double last = t.loss_at.empty() ? -INFINITY : t.loss_at.rbegin()->first;
  if (t.loss_at.insert_or_assign(budget, loss).second) at_budget_[budget].insert(trial);
  if (t.ended && budget > last) {  // a result after the end moves where it stopped
    if (--ended_at_[last] == 0) ended_at_.erase(last);
    ++ended_at_[budget];
  }
}

void BudgetHistory::end(uint64_t trial) {
  const auto it = trials_.find(trial);
  if (it == trials_.end() || it->second.ended) return;
  it->second.ended = true;
  if (!it->second.loss_at.empty()) ++ended_at_[it->second.loss_at.rbegin()->first];
}

std::vector<double> BudgetHistory::budgets() const {
  std::vector<double> out;
  for (const auto& [budget, trials] : at_budget_) out.push_back(budget);
  return out;
}

size_t BudgetHistory::results_at(double budget) const {
  const auto it = at_budget_.find(budget);
  return it == at_budget_.end() ? 0 : it->second.size();
}

size_t BudgetHistory::stopped_below(double budget) const {
  size_t n = 0;
  for (auto it = ended_at_.begin(); it != ended_at_.end() && it->first < budget; ++it) {
    n += it->second;
  }
  return n;
}

double BudgetHistory::agreement(double low, double high) const {
  const auto at_high = at_budget_.find(high);
  if (at_high == at_budget_.end()) return 0;
  std::vector<std::pair<double, double>> pairs;
  for (uint64_t index : at_high->second) {
    const Trial& t = trials_.at(index);
    const auto a = t.loss_at.find(low);
    if (a != t.loss_at.end()) pairs.emplace_back(a->second, t.loss_at.at(high));
  }
  return std::max(0.0, rank_agreement(pairs));
}

std::vector<BudgetHistory::Result> BudgetHistory::at(double budget) const {
  std::vector<Result> out;
  const auto it = at_budget_.find(budget);
  if (it == at_budget_.end()) return out;
  for (uint64_t index : it->second) {
    const Trial& t = trials_.at(index);
    out.push_back({t.x.data(), t.loss_at.at(budget)});
  }
  return out;
}

std::vector<BudgetHistory::Stopped> BudgetHistory::stopped_list(double budget) const {
  std::vector<Stopped> out;
  if (stopped_below(budget) == 0) return out;
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
    const auto index = t.at("index").get<uint64_t>();
    const auto x = t.at("x").get<std::vector<double>>();
    if (x.size() != dims) throw Error("a point has the wrong number of dimensions");
    for (const Json& r : t.at("results")) {
      h.record(index, x, r.at(0).get<double>(), r.at(1).get<double>());
    }
    h.trials_[index].x = x;
    // States saved before trials' ends were kept have no "ended": as running.
    if (t.value("ended", false)) h.end(index);
  }
  return h;
}

}  // namespace tune::search::detail
