// e^t for t <= 0, vectorisable: the kernel sums of TPE's Parzen estimators
// (parzen.cpp, joint_kernels.cpp) call it thousands of times a suggestion.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace tune::search::detail {

// e^t for t <= 0 (results below e^-700 are not needed here), to a few ulp,
// in plain arithmetic on V (double, or a vector of doubles): summing a
// thousand kernels then takes no calls into libm, and runs four at a time.
// GCC warns that a 32-byte vector changes the ABI without AVX; these
// functions never cross an ABI boundary (always inlined, and this header is
// included by .cpp files of search/internal only).
#pragma GCC diagnostic ignored "-Wpsabi"
using Double4 = double __attribute__((vector_size(32)));
using Bits4 = uint64_t __attribute__((vector_size(32)));

template <typename V>
[[gnu::always_inline]] inline V exp_nonpositive(V t) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 split so k * kLn2Hi is exact
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kShift = 0x1.8p52;  // adding it rounds to an integer, kept in the low bits
  t = t < -700.0 ? V{} - 700.0 : t;
  const V shifted = t * kLog2e + kShift;
  const V k = shifted - kShift;
  const V r = (t - k * kLn2Hi) - k * kLn2Lo;  // |r| <= ln(2) / 2
  // Taylor to r^12 (truncation error below 2e-16 relative), by Estrin's
  // scheme: four levels deep instead of Horner's twelve.
  const V r2 = r * r;
  const V r4 = r2 * r2;
  const V r8 = r4 * r4;
  const V a0 = 1.0 + r;
  const V a1 = 1.0 / 2 + r * (1.0 / 6);
  const V a2 = 1.0 / 24 + r * (1.0 / 120);
  const V a3 = 1.0 / 720 + r * (1.0 / 5040);
  const V a4 = 1.0 / 40320 + r * (1.0 / 362880);
  const V a5 = 1.0 / 3628800 + r * (1.0 / 39916800);
  const V b0 = a0 + r2 * a1;
  const V b1 = a2 + r2 * a3;
  const V b2 = a4 + r2 * a5;
  const V c0 = b0 + r4 * b1;
  const V c1 = b2 + r4 * (1.0 / 479001600);
  const V p = c0 + r8 * c1;
  // 2^k: k + 1023 in the exponent field (the low bits of `shifted` hold k).
  if constexpr (std::is_same_v<V, double>) {
    return p * std::bit_cast<double>((std::bit_cast<uint64_t>(shifted) + 1023) << 52);
  } else {
    return p * reinterpret_cast<V>((reinterpret_cast<Bits4>(shifted) + 1023) << 52);
  }
}

}  // namespace tune::search::detail
