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
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto n = static_cast<double>(values.size());
  const double q = percent / 100;  // np.percentile divides by 100 first
  const double virtual_index = (n - 1) * q;
  if (virtual_index >= n - 1) return values.back();
  if (virtual_index <= 0) return values.front();
  const double previous = std::floor(virtual_index);
  const double gamma = virtual_index - previous;
  const double a = values[static_cast<size_t>(previous)];
  const double b = values[static_cast<size_t>(previous) + 1];
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
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
