#include "schedulers/internal/objective.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tune::schedulers::detail {

void Objective::set_defaults(const std::string& scheduler, const std::string& metric, Mode mode) {
  if (metric_.empty()) metric_ = metric;
  if (!mode_) mode_ = mode;
  if (metric_.empty()) {
    throw ConfigError::at_key(
        "metric", fmt::format("the {} scheduler needs a metric: set the experiment's metric "
                              "or the scheduler's `metric` option",
                              scheduler));
  }
}

std::optional<double> Objective::score(const Json& result) const {
  auto value = number_at(result, metric_);
  if (!value) return std::nullopt;
  return sign() * *value;
}

std::optional<double> number_at(const Json& result, const std::string& key) {
  if (!result.is_object()) return std::nullopt;
  auto it = result.find(key);
  if (it == result.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

Json to_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

double double_from_json(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (value == "inf") return std::numeric_limits<double>::infinity();
  if (value == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace tune::schedulers::detail
