#include "schedulers/internal/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tune::schedulers::detail {

double nanpercentile(std::vector<double> values, double percent) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  std::sort(values.begin(), values.end());
  return sorted_percentile(values, percent);
}

double sorted_percentile(const std::vector<double>& values, double percent) {
  return sorted_percentile_of(values.size(), percent, [&](size_t i) { return values[i]; });
}

void StreamingPercentile::add(double value) {
  if (std::isnan(value)) return;
  if (lower_.empty() || value <= lower_.top()) {
    lower_.push(value);
  } else {
    upper_.push(value);
  }
  // The lower heap holds the values up to index floor((n - 1) * q), the
  // neighbour sorted_percentile_of reads first (all n when it reads the last).
  const size_t n = size();
  const double virtual_index = static_cast<double>(n - 1) * (percent_ / 100);
  const size_t want =
      std::min(n, static_cast<size_t>(std::max(0.0, std::floor(virtual_index))) + 1);
  while (lower_.size() > want) {
    upper_.push(lower_.top());
    lower_.pop();
  }
  while (lower_.size() < want) {
    lower_.push(upper_.top());
    upper_.pop();
  }
}

double StreamingPercentile::percentile() const {
  const size_t lower = lower_.size();
  return sorted_percentile_of(size(), percent_, [&](size_t i) {
    return i + 1 == lower ? lower_.top() : upper_.top();  // only these two are read
  });
}

RunningPercentile::RunningPercentile(const std::vector<double>& arrivals)
    : slot_(arrivals.size(), std::numeric_limits<size_t>::max()) {
  std::vector<size_t> order;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    if (!std::isnan(arrivals[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return arrivals[a] < arrivals[b]; });
  for (size_t s = 0; s < order.size(); ++s) {
    ranked_.push_back(arrivals[order[s]]);
    slot_[order[s]] = s;
  }
  tree_.assign(ranked_.size() + 1, 0);
}

void RunningPercentile::add(size_t arrival) {
  if (slot_.at(arrival) == std::numeric_limits<size_t>::max()) return;
  for (size_t i = slot_[arrival] + 1; i < tree_.size(); i += i & (~i + 1)) ++tree_[i];
  ++count_;
}

size_t RunningPercentile::kth(size_t k) const {
  // The Fenwick descent: the last position whose prefix count is <= k.
  size_t pos = 0;
  size_t step = 1;
  while (step * 2 < tree_.size()) step *= 2;
  for (; step > 0; step /= 2) {
    if (pos + step < tree_.size() && tree_[pos + step] <= k) {
      pos += step;
      k -= tree_[pos];
    }
  }
  return pos;  // 1-based pos + 1 holds it: slot pos
}

double RunningPercentile::percentile(double percent) const {
  return sorted_percentile_of(count_, percent, [&](size_t k) { return ranked_[kth(k)]; });
}

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  return (values[n / 2 - 1] + values[n / 2]) / 2;
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

}  // namespace tune::schedulers::detail
