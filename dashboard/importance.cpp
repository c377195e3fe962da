#include "dashboard/importance.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "dashboard/internal/fanova.h"

namespace tune::dashboard {
namespace {

// One CART regression tree grown on a bootstrap sample: the impurity
// decrease per feature, and the tree itself for fANOVA. The sample is
// sorted once by each feature (`by_feature`: its rows, repeats included, in
// increasing order of that feature); a split partitions each order in
// place, keeping it sorted, so no node sorts anything.
class ImpurityTree {
 public:
  ImpurityTree(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int max_depth,
               std::vector<std::vector<Eigen::Index>> by_feature)
      : x_(x),
        y_(y),
        max_depth_(max_depth),
        by_feature_(std::move(by_feature)),
        goes_left_(static_cast<size_t>(x.rows())),
        buffer_(by_feature_.front().size()),
        decrease_(Eigen::VectorXd::Zero(x.cols())) {}

  Eigen::VectorXd grow() {
    split(0, by_feature_.front().size(), 0);
    return decrease_;
  }
  const std::vector<internal::TreeNode>& nodes() const { return nodes_; }

 private:
  // Sum of squared deviations from the mean: n * variance, the weighted impurity.
  static double sse(double sum, double sum_sq, double n) {
    return n > 0 ? sum_sq - sum * sum / n : 0;
  }

  // The node holding positions [begin, end) of every feature's order;
  // returns its index in nodes_.
  int split(size_t begin, size_t end, int depth) {
    const auto n = static_cast<double>(end - begin);
    const int self = static_cast<int>(nodes_.size());
    double sum = 0, sum_sq = 0;
    for (size_t i = begin; i < end; ++i) {
      const double v = y_[by_feature_.front()[i]];
      sum += v, sum_sq += v * v;
    }
    nodes_.push_back({.value = n > 0 ? sum / n : 0});  // a leaf unless split below
    if (end - begin < 2 || depth >= max_depth_) return self;
    const double parent = sse(sum, sum_sq, n);
    if (parent <= 1e-12 * std::max(1.0, sum_sq)) return self;
    double best = parent;
    Eigen::Index best_feature = -1;
    size_t best_end = 0;  // the left child's end
    for (Eigen::Index f = 0; f < x_.cols(); ++f) {
      const auto& rows = by_feature_[f];
      double left = 0, left_sq = 0;
      for (size_t i = begin; i + 1 < end; ++i) {
        left += y_[rows[i]];
        left_sq += y_[rows[i]] * y_[rows[i]];
        if (!(x_(rows[i], f) < x_(rows[i + 1], f))) continue;  // no threshold between equal values
        const double nl = static_cast<double>(i + 1 - begin);
        const double cost = sse(left, left_sq, nl) + sse(sum - left, sum_sq - left_sq, n - nl);
        if (cost < best) best = cost, best_feature = f, best_end = i + 1;
      }
    }
    if (best_feature < 0) return self;
    decrease_[best_feature] += parent - best;
    {
      const auto& order = by_feature_[best_feature];
      nodes_[self].feature = static_cast<int>(best_feature);
      nodes_[self].threshold =
          (x_(order[best_end - 1], best_feature) + x_(order[best_end], best_feature)) / 2;
    }
    // The left child: the best feature's order up to the threshold; each
    // other order keeps its left rows first, in their order, then the right.
    const auto& chosen = by_feature_[best_feature];
    for (size_t i = begin; i < end; ++i) goes_left_[chosen[i]] = i < best_end;
    for (Eigen::Index f = 0; f < x_.cols(); ++f) {
      if (f == best_feature) continue;
      auto& rows = by_feature_[f];
      size_t left = begin, right = 0;
      for (size_t i = begin; i < end; ++i) {
        if (goes_left_[rows[i]]) {
          rows[left++] = rows[i];
        } else {
          buffer_[right++] = rows[i];
        }
      }
      std::copy(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(right),
                rows.begin() + static_cast<std::ptrdiff_t>(left));
    }
    const int left = split(begin, best_end, depth + 1);
    const int right = split(best_end, end, depth + 1);
    nodes_[self].left = left;
    nodes_[self].right = right;
    return self;
  }

  const Eigen::MatrixXd& x_;
  const Eigen::VectorXd& y_;
  int max_depth_;
  std::vector<std::vector<Eigen::Index>> by_feature_;
  std::vector<char> goes_left_;  // by row: in the left child of the split being made
  std::vector<Eigen::Index> buffer_;
  Eigen::VectorXd decrease_;
  std::vector<internal::TreeNode> nodes_;
};

double encode(const Json& v, bool log, std::map<std::string, double>& categories) {
  if (v.is_number()) {
    const double x = v.get<double>();
    return log && x > 0 ? std::log10(x) : x;
  }
  auto [it, added] = categories.try_emplace(v.dump(), static_cast<double>(categories.size()));
  return it->second;
}

// The positions of `n` usable trials that a fit uses: all of them, or
// `max` drawn by a shuffle with `rng` (whose later draws then differ).
std::vector<size_t> subsample(size_t n, size_t max, std::mt19937_64& rng) {
  std::vector<size_t> out(n);
  std::iota(out.begin(), out.end(), size_t{0});
  if (n > max) {
    std::shuffle(out.begin(), out.end(), rng);
    out.resize(max);
  }
  return out;
}

Json answer(const std::string& metric) {
  return {{"metric", metric},
          {"params", Json::array()},
          {"fanova", Json::array()},
          {"method",
           "mean decrease in impurity of a random forest (Optuna's "
           "MeanDecreaseImpurityImportanceEvaluator) and fANOVA over the same forest (Optuna's "
           "default, FanovaImportanceEvaluator)"}};
}

// importance() of `usable` (each with a finite value), drawn already: the
// forest's bootstrap samples come from `rng`.
Json fit(const std::vector<const TrialPoint*>& usable, const Json& params,
         const std::string& metric, const ImportanceOptions& options, std::mt19937_64& rng) {
  Json out = answer(metric);
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

  // Every row in increasing order of each feature (ties by row), once: a
  // tree's sample in that order is then each row as often as it was drawn.
  std::vector<std::vector<Eigen::Index>> sorted(static_cast<size_t>(d));
  for (Eigen::Index f = 0; f < d; ++f) {
    auto& rows = sorted[f];
    rows.resize(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), Eigen::Index{0});
    std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) { return x(a, f) < x(b, f); });
  }
  // fANOVA's box: the range of each feature's values.
  const Eigen::VectorXd lower = x.colwise().minCoeff().transpose();
  const Eigen::VectorXd upper = x.colwise().maxCoeff().transpose();
  Eigen::VectorXd total = Eigen::VectorXd::Zero(d);
  Eigen::VectorXd shares = Eigen::VectorXd::Zero(d);
  std::uniform_int_distribution<Eigen::Index> draw(0, n - 1);
  std::vector<int> drawn(static_cast<size_t>(n));
  for (int t = 0; t < options.num_trees; ++t) {
    std::fill(drawn.begin(), drawn.end(), 0);
    for (Eigen::Index i = 0; i < n; ++i) ++drawn[draw(rng)];
    std::vector<std::vector<Eigen::Index>> sample(static_cast<size_t>(d));
    for (Eigen::Index f = 0; f < d; ++f) {
      sample[f].reserve(static_cast<size_t>(n));
      for (auto r : sorted[f]) sample[f].insert(sample[f].end(), drawn[r], r);
    }
    ImpurityTree tree(x, y, options.max_depth, std::move(sample));
    const Eigen::VectorXd decrease = tree.grow();
    if (decrease.sum() > 0) total += decrease / decrease.sum();
    shares += internal::main_effect_shares(tree.nodes(), lower, upper);
  }
  if (total.sum() > 0) total /= total.sum();
  if (shares.sum() > 0) shares /= shares.sum();  // as Optuna normalises fANOVA's
  std::vector<Eigen::Index> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return total[a] > total[b]; });
  for (auto f : order)
    out["params"].push_back({{"name", params[f].at("name")}, {"importance", total[f]}});
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return shares[a] > shares[b]; });
  for (auto f : order)
    out["fanova"].push_back({{"name", params[f].at("name")}, {"importance", shares[f]}});
  return out;
}

}  // namespace

Json importance(const std::vector<TrialPoint>& trials, const Json& params,
                const std::string& metric, const ImportanceOptions& options) {
  std::vector<const TrialPoint*> usable;
  for (const TrialPoint& t : trials) {
    if (!t.last_metrics.is_object()) continue;
    const Json& v = t.last_metrics.contains(metric) ? t.last_metrics[metric] : Json();
    if (v.is_number() && std::isfinite(v.get<double>())) usable.push_back(&t);
  }
  std::mt19937_64 rng(options.seed);
  std::vector<const TrialPoint*> drawn;
  for (size_t i : subsample(usable.size(), options.max_trials, rng)) drawn.push_back(usable[i]);
  return fit(drawn, params, metric, options, rng);
}

Json importance_at_one_budget(const ExperimentDb& db, const Json& params, const std::string& metric,
                              const ImportanceOptions& options) {
  const int64_t budget = db.one_budget(metric, options.min_trials);
  // The subsample is drawn from the trials' ids, as importance() draws it
  // from their points: only the trials drawn are read and parsed.
  const std::vector<std::string> ids =
      budget > 0 ? db.trials_with_value_at(budget, metric) : std::vector<std::string>();
  std::mt19937_64 rng(options.seed);
  std::vector<std::string> wanted;
  for (size_t i : subsample(ids.size(), options.max_trials, rng)) wanted.push_back(ids[i]);
  const std::vector<TrialPoint> points = db.points_at(budget, wanted);
  std::vector<const TrialPoint*> drawn;
  for (const TrialPoint& p : points) drawn.push_back(&p);
  Json out = fit(drawn, params, metric, options, rng);
  out["budget"] = budget > 0 ? Json(budget) : Json();
  if (budget == 0) {
    out["reason"] = fmt::format("needs at least {} trials with a value of '{}' at one iteration",
                                options.min_trials, metric);
  }
  return out;
}

}  // namespace tune::dashboard
