// The few statistics the schedulers need, computed exactly as the NumPy
// calls in Ray Tune's schedulers compute them, so cut-offs match Ray's.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace tune::schedulers::detail {

// np.nanpercentile(values, percent) with the default "linear" method: NaNs
// dropped, sorted, virtual index (n - 1) * (percent / 100), interpolated as
// NumPy's _lerp does (from the upper neighbour when the fraction >= 0.5).
// NaN when no value is left.
double nanpercentile(std::vector<double> values, double percent);
// The same of values already sorted, without NaN.
double sorted_percentile(const std::vector<double>& values, double percent);

// sorted_percentile of n sorted values, `at(i)` giving the i-th smallest.
template <class At>
double sorted_percentile_of(size_t n, double percent, At&& at);

// sorted_percentile of the values added so far, each value added in
// O(log n) and asked for in O(log n) (a sorted vector costs O(n) an
// insertion): the cut-offs ASHA's rungs had at each arrival, replayed from a
// saved state. Knows all the values up front, in arrival order.
class RunningPercentile {
 public:
  explicit RunningPercentile(const std::vector<double>& arrivals);
  void add(size_t arrival);  // the arrival's value; a NaN is left out
  double percentile(double percent) const;
  size_t size() const { return count_; }

 private:
  size_t kth(size_t k) const;  // the slot of the k-th smallest added (0: the smallest)

  std::vector<double> ranked_;  // the values but NaN, ascending: one slot each
  std::vector<size_t> slot_;    // arrival -> its slot in ranked_ (NaN: none)
  std::vector<size_t> tree_;    // Fenwick counts of the slots added, 1-based
  size_t count_ = 0;
};

// sorted_percentile of values added one at a time, the percent fixed: two
// heaps split at the percentile's lower neighbour, so an addition costs
// O(log n) and the percentile O(1), where a sorted vector's insertion moves
// O(n) values (ASHA's rungs reach 100,000 values). NaNs are left out.
class StreamingPercentile {
 public:
  explicit StreamingPercentile(double percent) : percent_(percent) {}
  void add(double value);
  double percentile() const;
  size_t size() const { return lower_.size() + upper_.size(); }
  void clear() { *this = StreamingPercentile(percent_); }

 private:
  double percent_;
  std::priority_queue<double> lower_;  // the smallest values, to the lower neighbour
  std::priority_queue<double, std::vector<double>, std::greater<>> upper_;  // the rest
};

template <class At>
double sorted_percentile_of(size_t count, double percent, At&& at) {
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto n = static_cast<double>(count);
  const double q = percent / 100;  // np.percentile divides by 100 first
  const double virtual_index = (n - 1) * q;
  if (virtual_index >= n - 1) return at(count - 1);
  if (virtual_index <= 0) return at(0);
  const double previous = std::floor(virtual_index);
  const double gamma = virtual_index - previous;
  const double a = at(static_cast<size_t>(previous));
  const double b = at(static_cast<size_t>(previous) + 1);
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

// np.median: the mean of the two middle values for an even count. NaN when empty.
double median(std::vector<double> values);

// np.mean. NaN when empty.
double mean(const std::vector<double>& values);

}  // namespace tune::schedulers::detail
