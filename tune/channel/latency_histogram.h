// LatencyHistogram: durations counted in buckets about 4% wide (16 per
// doubling, from 1 µs to about 70 s; longer ones in the last), so that the
// controller can keep every decision's latency at the cost of one increment
// and say its percentiles at the end. A percentile is its bucket's upper
// edge: at most about 4% above the true value.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace tune {

class LatencyHistogram {
 public:
  void add(std::chrono::nanoseconds duration) {
    const double us = std::max(1.0, duration.count() / 1e3);
    const auto bucket = static_cast<size_t>(std::ceil(std::log2(us) * kPerDoubling));
    ++counts_[std::min(bucket, counts_.size() - 1)];
    ++count_;
    max_ = std::max(max_, duration);
  }

  int64_t count() const { return count_; }
  std::chrono::nanoseconds max() const { return max_; }

  // The duration at or below which `fraction` (0..1) of those added lie
  // (to the bucket's upper edge, and never above the largest); 0 when empty.
  std::chrono::nanoseconds percentile(double fraction) const {
    if (count_ == 0) return {};
    const auto rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(fraction * count_)));
    int64_t seen = 0;
    for (size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen < rank) continue;
      if (b + 1 == counts_.size()) break;  // the longest: their bucket has no upper edge
      const double edge_us = std::exp2(static_cast<double>(b) / kPerDoubling);
      return std::min(max_, std::chrono::nanoseconds(static_cast<int64_t>(edge_us * 1e3)));
    }
    return max_;
  }

 private:
  static constexpr int kPerDoubling = 16;
  std::array<int64_t, 26 * kPerDoubling + 1> counts_{};  // bucket b: up to 2^(b/16) µs
  int64_t count_ = 0;
  std::chrono::nanoseconds max_{0};
};

}  // namespace tune
