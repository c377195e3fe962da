#include "schedulers/internal/pb2.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "schedulers/internal/tv_gp.h"

namespace tune::schedulers {
namespace {

constexpr size_t kMaxRates = 200;

PbtOptions pbt_options(const Pb2Options& o) {
  PbtOptions p;
  p.time_attr = o.time_attr;
  p.metric = o.metric;
  p.mode = o.mode;
  p.perturbation_interval = o.perturbation_interval;
  p.burn_in_period = o.burn_in_period;
  p.quantile_fraction = o.quantile_fraction;
  p.resample_probability = 0;  // as Ray's PB2
  p.synch = o.synch;
  p.seed = o.seed;
  return p;
}

}  // namespace

Pb2Scheduler::Pb2Scheduler(Pb2Options options)
    : PbtScheduler(pbt_options(options), "pb2", /*explores_itself=*/true) {
  const Json& spec = options.hyperparam_bounds;
  if (!spec.is_object() || spec.empty()) {
    throw ConfigError::at_key(
        "hyperparam_bounds",
        "pb2 scheduler: hyperparam_bounds must be a table such as { lr = [1e-4, 1e-1] }");
  }
  for (const auto& [key, b] : spec.items()) {
    if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number() ||
        !(b[0].get<double>() < b[1].get<double>())) {
      throw ConfigError::at_key(
          "hyperparam_bounds." + key,
          fmt::format("pb2 scheduler: hyperparam_bounds.{} must be [lower, upper] with "
                      "lower < upper, got {}",
                      key, b.dump()));
    }
    bounds_.push_back({key, {b[0].get<double>(), b[1].get<double>()}});
  }
}

void Pb2Scheduler::on_perturbation_point(const std::string& trial_id, double time, double score,
                                         const Json& config) {
  Record r{trial_id, time, {}, score};
  for (const auto& [key, b] : bounds_) {
    if (!config.contains(key) || !config.at(key).is_number()) return;  // nothing to learn from
    r.values.push_back(config.at(key).get<double>());
  }
  data_.push_back(std::move(r));
}

Json Pb2Scheduler::explore(const std::string& recipient, const std::string& donor,
                           const Json& donor_config) {
  double max_time = -std::numeric_limits<double>::infinity();
  for (const Record& r : data_) max_time = std::max(max_time, r.time);
  if (max_time > last_exploration_time_) current_.clear();  // a new round

  // Improvement rates per (trial, values) group, in time order.
  std::vector<const Record*> sorted;
  for (const Record& r : data_) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Record* a, const Record* b) { return a->time < b->time; });
  struct Rate {
    const Record* record;
    double r_before;
    double y;
  };
  std::vector<Rate> rates;
  for (size_t i = 0; i < sorted.size(); ++i) {
    for (size_t j = i; j-- > 0;) {
      if (sorted[j]->trial == sorted[i]->trial && sorted[j]->values == sorted[i]->values) {
        const double dt = sorted[i]->time - sorted[j]->time;
        const double dy = sorted[i]->score - sorted[j]->score;
        if (dt > 0 && std::isfinite(dy))
          rates.push_back({sorted[i], sorted[i]->score - dy, dy / dt});
        break;
      }
    }
  }
  if (rates.size() > kMaxRates) rates.erase(rates.begin(), rates.end() - kMaxRates);

  const Rate* base = nullptr;  // the donor's latest rate
  for (const Rate& r : rates) {
    if (r.record->trial == donor) base = &r;
  }
  if (base == nullptr) return donor_config;  // Ray: no data on the donor, config unchanged

  const auto n = static_cast<Eigen::Index>(rates.size());
  const int dims = static_cast<int>(bounds_.size());
  Eigen::MatrixXd x(n, 2 + dims);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = rates[i].record->time;
    x(i, 1) = rates[i].r_before;
    for (int k = 0; k < dims; ++k) x(i, 2 + k) = rates[i].record->values[k];
    y[i] = rates[i].y;
  }
  // normalize(): (v - min) / (max - min + 1e-8); time and score by the data,
  // values by their bounds.
  Eigen::VectorXd lo(2 + dims), hi(2 + dims);
  for (int c = 0; c < 2; ++c) lo[c] = x.col(c).minCoeff(), hi[c] = x.col(c).maxCoeff();
  for (int k = 0; k < dims; ++k)
    lo[2 + k] = bounds_[k].second.first, hi[2 + k] = bounds_[k].second.second;
  Eigen::MatrixXd xn(n, 2 + dims);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    xn.col(c) = (x.col(c).array() - lo[c]) / (hi[c] - lo[c] + 1e-8);
  }
  // standardize(): population std, clipped to +-2.
  const double mean = y.mean();
  const double sd = std::sqrt((y.array() - mean).square().mean());
  Eigen::VectorXd yn = ((y.array() - mean) / (sd + 1e-8)).cwiseMax(-2.0).cwiseMin(2.0);
  Eigen::VectorXd fixed(2);
  fixed[0] = (base->record->time - lo[0]) / (hi[0] - lo[0] + 1e-8);
  fixed[1] = (base->r_before - lo[1]) / (hi[1] - lo[1] + 1e-8);

  const detail::TvGpParams params = detail::fit_tv_gp(xn, yn);
  detail::TvGp m(xn, yn, params);
  Eigen::VectorXd picked;
  if (current_.empty()) {
    picked = detail::optimize_ucb(m, m, fixed, dims, rng());
  } else {
    const auto c = static_cast<Eigen::Index>(current_.size());
    Eigen::MatrixXd x1(n + c, 2 + dims);
    Eigen::VectorXd y1 = Eigen::VectorXd::Zero(n + c);
    x1.topRows(n) = xn;
    y1.head(n) = yn;
    for (Eigen::Index i = 0; i < c; ++i) {
      x1(n + i, 0) = fixed[0];
      x1(n + i, 1) = fixed[1];
      for (int k = 0; k < dims; ++k) {
        x1(n + i, 2 + k) = (current_[i][k] - lo[2 + k]) / (hi[2 + k] - lo[2 + k] + 1e-8);
      }
    }
    detail::TvGp m1(x1, y1, params);
    picked = detail::optimize_ucb(m, m1, fixed, dims, rng());
  }

  Json config = donor_config;
  std::vector<double> values;
  for (int k = 0; k < dims; ++k) {
    const auto& [key, b] = bounds_[k];
    // xt * (max - min) + min, then float32, as Ray; kept inside the bounds,
    // which float32 can round past (0.0001 becomes 9.99999975e-05).
    const double v = std::clamp<double>(
        static_cast<float>(picked[k] * (b.second - b.first) + b.first), b.first, b.second);
    if (donor_config.contains(key) && donor_config.at(key).is_number_integer()) {
      config[key] = static_cast<int64_t>(std::trunc(v));
      values.push_back(std::trunc(v));
    } else {
      config[key] = v;
      values.push_back(v);
    }
  }
  // The recipient starts where the donor is, with the new values.
  data_.push_back({recipient, base->record->time, values, base->record->score});

  if (max_time > last_exploration_time_) {
    last_exploration_time_ = max_time;
    current_ = {values};
  } else {
    current_.push_back(values);
  }
  return config;
}

Json Pb2Scheduler::save_extra() const {
  Json data = Json::array();
  for (const Record& r : data_) data.push_back({r.trial, r.time, r.values, r.score});
  return {{"data", data}, {"current", current_}, {"last_exploration_time", last_exploration_time_}};
}

void Pb2Scheduler::restore_extra(const Json& state) {
  data_.clear();
  for (const Json& r : state.at("data")) {
    data_.push_back({r.at(0).get<std::string>(), r.at(1).get<double>(),
                     r.at(2).get<std::vector<double>>(), r.at(3).get<double>()});
  }
  current_ = state.at("current").get<std::vector<std::vector<double>>>();
  last_exploration_time_ = state.at("last_exploration_time").get<double>();
}

}  // namespace tune::schedulers
