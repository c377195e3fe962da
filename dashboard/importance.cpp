#include "dashboard/importance.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace tune::dashboard {
namespace {

// One CART regression tree grown on a bootstrap sample; only the impurity
// decrease per feature is kept, since nothing is predicted.
class ImpurityTree {
 public:
  ImpurityTree(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int max_depth)
      : x_(x), y_(y), max_depth_(max_depth), decrease_(Eigen::VectorXd::Zero(x.cols())) {}

  Eigen::VectorXd grow(std::vector<Eigen::Index> rows) {
    split(rows, 0);
    return decrease_;
  }

 private:
  // Sum of squared deviations from the mean: n * variance, the weighted impurity.
  static double sse(double sum, double sum_sq, double n) {
    return n > 0 ? sum_sq - sum * sum / n : 0;
  }

  void split(std::vector<Eigen::Index>& rows, int depth) {
    const auto n = static_cast<double>(rows.size());
    if (rows.size() < 2 || depth >= max_depth_) return;
    double sum = 0, sum_sq = 0;
    for (auto r : rows) sum += y_[r], sum_sq += y_[r] * y_[r];
    const double parent = sse(sum, sum_sq, n);
    if (parent <= 1e-12 * std::max(1.0, sum_sq)) return;
    double best = parent;
    Eigen::Index best_feature = -1;
    double threshold = 0;
    for (Eigen::Index f = 0; f < x_.cols(); ++f) {
      std::sort(rows.begin(), rows.end(), [&](auto a, auto b) { return x_(a, f) < x_(b, f); });
      double left = 0, left_sq = 0;
      for (size_t i = 0; i + 1 < rows.size(); ++i) {
        left += y_[rows[i]];
        left_sq += y_[rows[i]] * y_[rows[i]];
        const double a = x_(rows[i], f), b = x_(rows[i + 1], f);
        if (!(a < b)) continue;  // no threshold between equal values
        const double nl = static_cast<double>(i + 1);
        const double cost = sse(left, left_sq, nl) + sse(sum - left, sum_sq - left_sq, n - nl);
        if (cost < best) best = cost, best_feature = f, threshold = (a + b) / 2;
      }
    }
    if (best_feature < 0) return;
    decrease_[best_feature] += parent - best;
    std::vector<Eigen::Index> left_rows, right_rows;
    for (auto r : rows) (x_(r, best_feature) <= threshold ? left_rows : right_rows).push_back(r);
    split(left_rows, depth + 1);
    split(right_rows, depth + 1);
  }

  const Eigen::MatrixXd& x_;
  const Eigen::VectorXd& y_;
  int max_depth_;
  Eigen::VectorXd decrease_;
};

double encode(const Json& v, bool log, std::map<std::string, double>& categories) {
  if (v.is_number()) {
    const double x = v.get<double>();
    return log && x > 0 ? std::log10(x) : x;
  }
  auto [it, added] = categories.try_emplace(v.dump(), static_cast<double>(categories.size()));
  return it->second;
}

}  // namespace

Json importance(const std::vector<TrialPoint>& trials, const Json& params,
                const std::string& metric, const ImportanceOptions& options) {
  Json out = {{"metric", metric},
              {"params", Json::array()},
              {"method",
               "mean decrease in impurity of a random forest (Optuna's "
               "MeanDecreaseImpurityImportanceEvaluator; not fANOVA, Optuna's default)"}};
  std::vector<const TrialPoint*> usable;
  for (const TrialPoint& t : trials) {
    if (!t.last_metrics.is_object()) continue;
    const Json& v = t.last_metrics.contains(metric) ? t.last_metrics[metric] : Json();
    if (v.is_number() && std::isfinite(v.get<double>())) usable.push_back(&t);
  }
  std::mt19937_64 rng(options.seed);
  if (usable.size() > options.max_trials) {
    std::shuffle(usable.begin(), usable.end(), rng);
    usable.resize(options.max_trials);
  }
  out["num_trials"] = usable.size();
  if (metric.empty() || params.empty() || usable.size() < options.min_trials) {
    out["reason"] = fmt::format("needs at least {} trials with a value of '{}' ({} so far)",
                                options.min_trials, metric, usable.size());
    return out;
  }
  const auto n = static_cast<Eigen::Index>(usable.size());
  const auto d = static_cast<Eigen::Index>(params.size());
  Eigen::MatrixXd x(n, d);
  Eigen::VectorXd y(n);
  for (Eigen::Index f = 0; f < d; ++f) {
    const std::string name = params[f].at("name");
    const bool log = params[f].value("log", false);
    std::map<std::string, double> categories;
    for (Eigen::Index i = 0; i < n; ++i) {
      const Json& config = usable[i]->config;
      x(i, f) = encode(config.contains(name) ? config[name] : Json(), log, categories);
    }
  }
  for (Eigen::Index i = 0; i < n; ++i) y[i] = usable[i]->last_metrics[metric].get<double>();

  Eigen::VectorXd total = Eigen::VectorXd::Zero(d);
  std::uniform_int_distribution<Eigen::Index> draw(0, n - 1);
  for (int t = 0; t < options.num_trees; ++t) {
    std::vector<Eigen::Index> rows(static_cast<size_t>(n));
    for (auto& r : rows) r = draw(rng);
    Eigen::VectorXd decrease = ImpurityTree(x, y, options.max_depth).grow(std::move(rows));
    if (decrease.sum() > 0) total += decrease / decrease.sum();
  }
  if (total.sum() > 0) total /= total.sum();
  std::vector<Eigen::Index> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return total[a] > total[b]; });
  for (auto f : order)
    out["params"].push_back({{"name", params[f].at("name")}, {"importance", total[f]}});
  return out;
}

Json importance_at_one_budget(const ExperimentDb& db, const Json& params, const std::string& metric,
                              const ImportanceOptions& options) {
  auto [budget, points] = db.points_at_one_budget(metric, options.min_trials);
  Json out = importance(points, params, metric, options);
  out["budget"] = budget > 0 ? Json(budget) : Json();
  if (budget == 0) {
    out["reason"] = fmt::format("needs at least {} trials with a value of '{}' at one iteration",
                                options.min_trials, metric);
  }
  return out;
}

}  // namespace tune::dashboard
