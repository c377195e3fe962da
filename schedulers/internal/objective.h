// The metric a scheduler ranks trials by, folded with its mode into a sign
// once (max: +1, min: -1) so that "higher score is better" everywhere after,
// as Ray's schedulers do with metric_op.
#pragma once

#include <optional>
#include <string>

#include "core/config.h"
#include "core/types.h"

namespace tune::schedulers::detail {

class Objective {
 public:
  Objective(std::string metric, std::optional<Mode> mode)
      : metric_(std::move(metric)), mode_(mode) {}

  // Fills in the experiment's metric and mode where the scheduler's own
  // options left them unset (Ray's set_search_properties). Throws
  // ConfigError (key "metric") when no metric is known either way.
  void set_defaults(const std::string& scheduler, const std::string& metric, Mode mode);

  // sign * result[metric]; nullopt when the metric is absent or not a number.
  std::optional<double> score(const Json& result) const;

  const std::string& metric() const { return metric_; }
  Mode mode() const { return mode_.value_or(Mode::kMax); }
  double sign() const { return mode() == Mode::kMax ? 1.0 : -1.0; }

 private:
  std::string metric_;
  std::optional<Mode> mode_;
};

// result[key] as a double; nullopt when absent or not a number.
std::optional<double> number_at(const Json& result, const std::string& key);

// JSON has no NaN or infinities: they are written as strings and read back.
Json to_json(double value);
double double_from_json(const Json& value);

}  // namespace tune::schedulers::detail
