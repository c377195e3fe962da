// The few statistics the schedulers need, computed exactly as the NumPy
// calls in Ray Tune's schedulers compute them, so cut-offs match Ray's.
#pragma once

#include <vector>

namespace tune::schedulers::detail {

// np.nanpercentile(values, percent) with the default "linear" method: NaNs
// dropped, sorted, virtual index (n - 1) * (percent / 100), interpolated as
// NumPy's _lerp does (from the upper neighbour when the fraction >= 0.5).
// NaN when no value is left.
double nanpercentile(std::vector<double> values, double percent);
// The same of values already sorted, without NaN.
double sorted_percentile(const std::vector<double>& values, double percent);

// np.median: the mean of the two middle values for an even count. NaN when empty.
double median(std::vector<double> values);

// np.mean. NaN when empty.
double mean(const std::vector<double>& values);

}  // namespace tune::schedulers::detail
