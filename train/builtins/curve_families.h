// The parametric learning-curve families of benchmarks/multi_fidelity, which
// simulated ranks also report ([simulation] curve = "crossing" | "faithful",
// tune/launch/sim/trial_curve.h): accuracy(t) = ceiling (1 - exp(-speed t)) over a
// learning rate (`lr`, best near 1e-2), `momentum` (best 0.9), `layers`
// (an integer, best 5) and `dropout` (best 0.25). The ceiling is a bowl
// around that point, the same for both; the speed tells them apart:
//
//   crossing  high rates learn fast but plateau lower, so early iterations
//             rank the best region's configs about as well as chance
//   faithful  better configs also learn faster, as in well-behaved training,
//             so every iteration ranks configs about as the last does
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/config.h"

namespace tune::sim {

enum class CurveFamily { kCrossing, kFaithful };

// "crossing" or "faithful"; nullopt for another name.
std::optional<CurveFamily> curve_family_from_string(std::string_view name);

// The config keys a family reads, in the order above.
inline constexpr std::array<std::string_view, 4> kFamilyParameters = {"lr", "momentum", "layers",
                                                                      "dropout"};

// One configuration of a family.
struct FamilyPoint {
  double lr = 1e-2;  // > 0
  double momentum = 0.9;
  int64_t layers = 5;
  double dropout = 0.25;

  // The keys above from a trial's config. Throws ConfigError naming the key
  // that is missing, of another type, or (lr) not > 0.
  static FamilyPoint from_config(const Config& config);
};

// The family's accuracy after `t` iterations, in [0, 0.95).
double family_accuracy(CurveFamily family, const FamilyPoint& point, int64_t t);

}  // namespace tune::sim
