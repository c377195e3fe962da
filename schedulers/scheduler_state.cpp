// decode_scheduler_state: the scheduler's options read as make_scheduler
// reads them (for the reduction factor and the mode), then its saved state
// read by the scheduler class that wrote it.
#include "schedulers/scheduler_state.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "schedulers/internal/asha.h"
#include "schedulers/internal/hyperband.h"
#include "schedulers/internal/options.h"

namespace tune::schedulers {
namespace {

// The sign save() folded into the scores (detail::Objective::sign).
double sign_of(const std::optional<Mode>& own, Mode experiment_mode) {
  return own.value_or(experiment_mode) == Mode::kMax ? 1.0 : -1.0;
}

SchedulerState decode(const std::string& type, const Json& options, Mode experiment_mode,
                      const Json& saved) {
  SchedulerState out;
  if (type == "asha" || type == "async_hyperband") {
    const AshaOptions asha = detail::read_asha_options(options);
    out.asha = AshaScheduler::saved_brackets(saved, asha.reduction_factor,
                                             sign_of(asha.mode, experiment_mode));
  } else if (type == "hyperband") {
    const HyperBandOptions hyperband = detail::read_hyperband_options(options);
    const double sign = sign_of(hyperband.mode, experiment_mode);
    if (hyperband.asynchronous) {
      out.asha = AshaScheduler::saved_brackets(
          saved, asynchronous_hyperband(hyperband).reduction_factor, sign);
    } else {
      out.hyperband = HyperBandScheduler::saved_brackets(saved, sign, hyperband);
    }
  }
  return out;
}

}  // namespace

SchedulerState decode_scheduler_state(const std::string& type, const Json& options,
                                      Mode experiment_mode, const Json& saved) {
  if (saved.is_null() || (saved.is_object() && saved.empty())) return {};
  try {
    return decode(type, options, experiment_mode, saved);
  } catch (const Json::exception& e) {
    throw Error(
        fmt::format("the saved state of scheduler '{}' is not of its layout: {}", type, e.what()));
  }
}

std::string saved_scheduler_type(const Json& saved) {
  if (!saved.is_object()) return "";
  if (saved.contains("bands")) return "hyperband";  // HyperBandScheduler::save
  if (saved.contains("brackets")) return "asha";    // AshaScheduler::save
  return "";
}

}  // namespace tune::schedulers
