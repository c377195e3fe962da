#include "search/internal/bohb.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/errors.h"
#include "search/internal/parzen.h"

namespace tune::search {

BohbSearcher::BohbSearcher(BohbOptions options)
    : ModelBasedSearcher("bohb", options.base), options_(std::move(options)) {
  if (options_.time_attr.empty()) throw ConfigError::at_key("time_attr", "must not be empty");
  // Two points make the good estimator and one the bad: three at least.
  if (options_.min_points_in_model != 0 && options_.min_points_in_model < 3) {
    throw ConfigError::at_key(
        "min_points_in_model",
        fmt::format("must be 0 (dims + 2) or at least 3, got {}", options_.min_points_in_model));
  }
  if (!(options_.top_fraction > 0 && options_.top_fraction < 1)) {
    throw ConfigError::at_key("top_fraction",
                              fmt::format("must be in (0, 1), got {}", options_.top_fraction));
  }
  if (!(options_.random_fraction >= 0 && options_.random_fraction <= 1)) {
    throw ConfigError::at_key("random_fraction",
                              fmt::format("must be in [0, 1], got {}", options_.random_fraction));
  }
  if (options_.n_candidates < 1) {
    throw ConfigError::at_key("n_candidates",
                              fmt::format("must be at least 1, got {}", options_.n_candidates));
  }
}

size_t BohbSearcher::min_points() const {
  return options_.min_points_in_model > 0 ? static_cast<size_t>(options_.min_points_in_model)
                                          : encoding().size() + 2;
}

double BohbSearcher::model_budget() const {
  // Two results make l and one g.
  constexpr size_t kMinResults = 3;
  const std::vector<double> budgets = history_.budgets();
  for (auto it = budgets.rbegin(); it != budgets.rend(); ++it) {
    const size_t n = history_.results_at(*it);
    if (n >= kMinResults && n + history_.stopped_below(*it) >= min_points()) return *it;
  }
  return -1;
}

size_t BohbSearcher::results_at(double budget) const { return history_.results_at(budget); }

double BohbSearcher::stopped_weight(double budget) const {
  const double model = model_budget();
  return model >= 0 && budget < model ? history_.agreement(budget, model) : 0.0;
}

bool BohbSearcher::ready_for_model() const { return model_budget() >= 0; }

void BohbSearcher::on_intermediate(uint64_t index, const std::vector<double>& x, double loss,
                                   const Json& result) {
  const auto it = result.find(options_.time_attr);
  if (it == result.end() || !it->is_number()) return;
  const double budget = it->get<double>();
  if (!std::isfinite(budget)) return;
  history_.record(index, x, budget, loss);
}

void BohbSearcher::on_trial_end(uint64_t index) { history_.end(index); }

std::vector<double> BohbSearcher::propose(Rng& rng) {
  if (detail::unit(rng) < options_.random_fraction) {
    return encoding().encode(encoding().sample(rng));
  }
  const double budget = model_budget();
  std::vector<detail::BudgetHistory::Result> at = history_.at(budget);
  std::stable_sort(at.begin(), at.end(),
                   [](const auto& a, const auto& b) { return a.loss < b.loss; });
  const size_t n_good = std::clamp<size_t>(
      static_cast<size_t>(std::ceil(options_.top_fraction * static_cast<double>(at.size()))), 2,
      at.size() - 1);
  std::vector<const double*> good, bad;
  for (size_t i = 0; i < at.size(); ++i) (i < n_good ? good : bad).push_back(at[i].x);
  std::vector<double> bad_weights(bad.size(), 1.0);
  // The trials stopped below `budget` are losers there too, each weighted
  // by how faithfully the budget it stopped at ranks trials against `budget`.
  std::map<double, double> weight_at;  // stop budget -> its agreement with `budget`
  for (const auto& trial : history_.stopped_list(budget)) {
    auto it = weight_at.find(trial.last_budget);
    if (it == weight_at.end()) {
      it =
          weight_at.emplace(trial.last_budget, history_.agreement(trial.last_budget, budget)).first;
    }
    if (it->second > 0) {
      bad.push_back(trial.x);
      bad_weights.push_back(it->second);
    }
  }

  const auto& dims = encoding().dims();
  constexpr double kPriorWeight = 1.0;
  const detail::ParzenEstimator l(dims, good, std::vector<double>(good.size(), 1.0), kPriorWeight,
                                  detail::Bandwidth::kNeighbour, detail::KernelScale::kDensity);
  const detail::ParzenEstimator g(dims, bad, bad_weights, kPriorWeight,
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

Json BohbSearcher::save_model() const { return history_.save(); }

void BohbSearcher::restore_model(const Json& state) {
  history_ = detail::BudgetHistory::restore(state, encoding().size());
}

}  // namespace tune::search
