#include "train/builtins/curve_families.h"

#include <algorithm>
#include <cmath>

namespace tune::sim {

std::optional<CurveFamily> curve_family_from_string(std::string_view name) {
  if (name == "crossing") return CurveFamily::kCrossing;
  if (name == "faithful") return CurveFamily::kFaithful;
  return std::nullopt;
}

FamilyPoint FamilyPoint::from_config(const Config& config) {
  FamilyPoint p{.lr = config.get<double>("lr"),
                .momentum = config.get<double>("momentum"),
                .layers = config.get<int64_t>("layers"),
                .dropout = config.get<double>("dropout")};
  if (!(p.lr > 0)) throw ConfigError::at_key("lr", "must be > 0 (its log10 places the curve)");
  return p;
}

double family_accuracy(CurveFamily family, const FamilyPoint& p, int64_t t) {
  const double u = std::log10(p.lr) + 2;  // 0 at lr = 1e-2
  const double layers = static_cast<double>(p.layers);
  const double ceiling =
      std::max(0.1, 0.95 - 0.06 * u * u - 0.5 * std::pow(p.momentum - 0.9, 2) -
                        0.01 * std::pow(layers - 5, 2) - 0.6 * std::pow(p.dropout - 0.25, 2));
  const double speed =
      family == CurveFamily::kCrossing
          ? 0.08 * std::pow(10.0, 0.25 * u) * (1 - 0.8 * p.dropout) / (1 + 0.1 * layers)
          : 0.1 * std::pow(ceiling / 0.95, 3) / (1 + 0.05 * layers);
  return ceiling * (1 - std::exp(-speed * static_cast<double>(t)));
}

}  // namespace tune::sim
