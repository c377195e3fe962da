// The controller's latency histogram (tune/channel/latency_histogram.h): its
// percentiles within a bucket's width of the true ones, never above the largest.
#include "tune/channel/latency_histogram.h"

#include <doctest/doctest.h>

using namespace tune;
using namespace std::chrono_literals;

TEST_CASE("percentiles of a thousand latencies from 1 to 1,000 ms are within 5% of the true ones") {
  LatencyHistogram h;
  CHECK(h.percentile(0.5) == 0ns);
  for (int ms = 1000; ms >= 1; --ms) h.add(std::chrono::milliseconds(ms));
  CHECK(h.count() == 1000);
  CHECK(h.max() == 1000ms);
  const double p50 = h.percentile(0.5).count() / 1e6, p99 = h.percentile(0.99).count() / 1e6;
  CHECK(p50 >= 500);
  CHECK(p50 <= 500 * 1.05);
  CHECK(p99 >= 990);
  CHECK(p99 <= 1000);  // never above the largest
  CHECK(h.percentile(1.0) == 1000ms);
}

TEST_CASE("latencies under a microsecond and over a minute are counted all the same") {
  LatencyHistogram h;
  h.add(200ns);
  h.add(0ns);
  h.add(std::chrono::hours(2));
  CHECK(h.count() == 3);
  CHECK(h.percentile(0.5) <= 1us);
  CHECK(h.percentile(1.0) == std::chrono::hours(2));
}
