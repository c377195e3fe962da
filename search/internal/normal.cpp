#include "search/internal/normal.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace tune::search::detail {

double norm_cdf(double z) { return 0.5 * std::erfc(-z * std::numbers::sqrt2 / 2); }

double log_norm_cdf(double z) {
  if (z > -5) return std::log(norm_cdf(z));
  // Phi(z) = phi(z) / -z (1 - 1/z^2 + 3/z^4 - ...), the asymptotic series.
  const double r = 1 / (z * z);
  return -0.5 * z * z - kLogSqrt2Pi - std::log(-z) + std::log1p(-r + 3 * r * r);
}

double norm_sf(double z) { return 0.5 * std::erfc(z * std::numbers::sqrt2 / 2); }

double norm_ppf(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  // Acklam's coefficients (relative error below 1.2e-9).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - kLow) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step on the side where the residual is not cancelled.
  const double e = x < 0 ? norm_cdf(x) - p : (1 - p) - norm_sf(x);
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double norm_mass(double a, double b) {
  // Both tails below 1e-17: the mass rounds to exactly 1; skip the erfcs.
  if (a < -8.5 && b > 8.5) return 1.0;
  if (a >= 0) return norm_sf(a) - norm_sf(b);
  if (b <= 0) return norm_cdf(b) - norm_cdf(a);
  return 1 - norm_cdf(a) - norm_sf(b);
}

double truncated_norm_sample(double a, double b, double u) {
  double z;
  if (a < -8.5 && b > 8.5) {  // both tails below 1e-17: the plain normal, no erfcs
    z = norm_ppf(u);
  } else if (a >= 0) {  // upper tail: work with survival probabilities
    const double pa = norm_sf(a);
    const double pb = norm_sf(b);
    z = -norm_ppf(pa - u * (pa - pb));
  } else {
    const double pa = norm_cdf(a);
    const double pb = norm_cdf(b);
    z = norm_ppf(pa + u * (pb - pa));
  }
  if (!(z >= a)) z = a;  // also catches NaN from a degenerate interval
  if (z > b) z = b;
  return z;
}

double log_ei_factor(double z) {
  if (z > -6) {
    const double h = z * norm_cdf(z) + std::exp(-0.5 * z * z - kLogSqrt2Pi);
    return std::log(std::max(h, std::numeric_limits<double>::min()));
  }
  // h(z) = phi(z) (1 - t R(t)) with t = -z and Mills' ratio R; for t > 6 the
  // asymptotic series 1/t^2 - 3/t^4 + 15/t^6 - 105/t^8 is accurate to ~1e-6.
  const double t2 = z * z;
  const double inv = 1 / t2;
  const double series = inv * (1 - 3 * inv * (1 - 5 * inv * (1 - 7 * inv)));
  return -0.5 * t2 - kLogSqrt2Pi + std::log(series);
}

}  // namespace tune::search::detail
