#include "search/bohb.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "search/internal/parzen.h"

namespace tune::search {

BohbSearcher::BohbSearcher(BohbOptions options)
    : ModelBasedSearcher("bohb", options.base), options_(std::move(options)) {
  if (options_.time_attr.empty()) throw ConfigError("must not be empty", {}, 0, "time_attr");
  // Two points make the good estimator and one the bad: three at least.
  if (options_.min_points_in_model != 0 && options_.min_points_in_model < 3) {
    throw ConfigError(
        fmt::format("must be 0 (dims + 2) or at least 3, got {}", options_.min_points_in_model), {},
        0, "min_points_in_model");
  }
  if (!(options_.top_fraction > 0 && options_.top_fraction < 1)) {
    throw ConfigError(fmt::format("must be in (0, 1), got {}", options_.top_fraction), {}, 0,
                      "top_fraction");
  }
  if (!(options_.random_fraction >= 0 && options_.random_fraction <= 1)) {
    throw ConfigError(fmt::format("must be in [0, 1], got {}", options_.random_fraction), {}, 0,
                      "random_fraction");
  }
  if (options_.n_candidates < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.n_candidates), {}, 0,
                      "n_candidates");
  }
}

size_t BohbSearcher::min_points() const {
  return options_.min_points_in_model > 0 ? static_cast<size_t>(options_.min_points_in_model)
                                          : encoding().size() + 2;
}

double BohbSearcher::model_budget() const {
  for (auto it = counts_.rbegin(); it != counts_.rend(); ++it) {
    if (it->second >= min_points()) return it->first;
  }
  return -1;
}

size_t BohbSearcher::results_at(double budget) const {
  const auto it = counts_.find(budget);
  return it == counts_.end() ? 0 : it->second;
}

bool BohbSearcher::ready_for_model() const { return model_budget() >= 0; }

void BohbSearcher::on_intermediate(uint64_t index, const std::vector<double>& x, double loss,
                                   const Json& result) {
  const auto it = result.find(options_.time_attr);
  if (it == result.end() || !it->is_number()) return;
  const double budget = it->get<double>();
  if (!std::isfinite(budget)) return;
  Trial& trial = trials_[index];
  if (trial.x.empty()) trial.x = x;
  if (trial.loss_at.insert_or_assign(budget, loss).second) ++counts_[budget];
}

std::vector<double> BohbSearcher::propose(Rng& rng) {
  if (detail::unit(rng) < options_.random_fraction) {
    return encoding().encode(encoding().sample(rng));
  }
  const double budget = model_budget();
  std::vector<std::pair<double, const double*>> at;  // (loss, x)
  for (const auto& [index, trial] : trials_) {
    const auto it = trial.loss_at.find(budget);
    if (it != trial.loss_at.end()) at.emplace_back(it->second, trial.x.data());
  }
  std::stable_sort(at.begin(), at.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t n_good = std::clamp<size_t>(
      static_cast<size_t>(std::ceil(options_.top_fraction * static_cast<double>(at.size()))), 2,
      at.size() - 1);
  std::vector<const double*> good, bad;
  for (size_t i = 0; i < at.size(); ++i) (i < n_good ? good : bad).push_back(at[i].second);

  const auto& dims = encoding().dims();
  constexpr double kPriorWeight = 1.0;
  const detail::ParzenEstimator l(dims, good, std::vector<double>(good.size(), 1.0), kPriorWeight,
                                  detail::Bandwidth::kNeighbour, detail::KernelScale::kDensity);
  const detail::ParzenEstimator g(dims, bad, std::vector<double>(bad.size(), 1.0), kPriorWeight,
                                  detail::Bandwidth::kNeighbour, detail::KernelScale::kDensity);
  std::vector<std::vector<double>> candidates;
  for (int64_t c = 0; c < options_.n_candidates; ++c) candidates.push_back(l.sample_joint(rng));
  std::vector<double> log_l, log_g;
  l.log_pdf_joint(candidates, log_l);
  g.log_pdf_joint(candidates, log_g);
  size_t best = 0;
  for (size_t c = 1; c < candidates.size(); ++c) {
    if (log_l[c] - log_g[c] > log_l[best] - log_g[best]) best = c;
  }
  return candidates[best];
}

Json BohbSearcher::save_model() const {
  Json trials = Json::array();
  for (const auto& [index, trial] : trials_) {
    Json results = Json::array();
    for (const auto& [budget, loss] : trial.loss_at) results.push_back({budget, loss});
    trials.push_back({{"index", index}, {"x", trial.x}, {"results", std::move(results)}});
  }
  return {{"trials", std::move(trials)}};
}

void BohbSearcher::restore_model(const Json& state) {
  std::map<uint64_t, Trial> trials;
  std::map<double, size_t> counts;
  for (const Json& t : state.at("trials")) {
    Trial trial;
    trial.x = t.at("x").get<std::vector<double>>();
    if (trial.x.size() != encoding().size()) {
      throw Error("a point has the wrong number of dimensions");
    }
    for (const Json& r : t.at("results")) {
      if (trial.loss_at.insert_or_assign(r.at(0).get<double>(), r.at(1).get<double>()).second) {
        ++counts[r.at(0).get<double>()];
      }
    }
    trials[t.at("index").get<uint64_t>()] = std::move(trial);
  }
  trials_ = std::move(trials);
  counts_ = std::move(counts);
}

}  // namespace tune::search
