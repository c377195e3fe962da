// The standard normal distribution, written out (no Boost, no SciPy) for the
// model-based searchers: TPE's truncated-normal kernels, GP-BO's expected
// improvement and the randn domains' probability scale.
#pragma once

namespace tune::search::detail {

inline constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

// Phi(z) and 1 - Phi(z), each accurate in its own tail.
double norm_cdf(double z);
double norm_sf(double z);

// Phi^-1(p) for p in (0, 1), to about 1e-15 relative (Acklam's rational
// approximation plus one Halley step). Returns +-inf at 1 and 0.
double norm_ppf(double p);

// P(a <= Z <= b) for a <= b without cancellation in either tail.
double norm_mass(double a, double b);

// A standard normal truncated to [a, b], by inverse CDF from u in [0, 1).
double truncated_norm_sample(double a, double b, double u);

// log Phi(z), accurate for very negative z (where Phi underflows).
double log_norm_cdf(double z);

// log(z Phi(z) + phi(z)): the log of expected improvement per unit sd,
// accurate for very negative z (where EI underflows).
double log_ei_factor(double z);

}  // namespace tune::search::detail
