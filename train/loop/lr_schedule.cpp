#include "train/loop/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "core/errors.h"

namespace train {

LrScheduler::LrScheduler(LrSchedule schedule, double base_lr, int64_t warmup_steps,
                         int64_t total_steps)
    : schedule_(schedule),
      base_lr_(base_lr),
      warmup_steps_(warmup_steps),
      total_steps_(total_steps) {
  if (total_steps < 1) {
    throw tune::ConfigError("learning-rate schedule: total steps must be >= 1, got " +
                            std::to_string(total_steps));
  }
  if (warmup_steps < 0) {
    throw tune::ConfigError("learning-rate schedule: warmup steps must be >= 0, got " +
                            std::to_string(warmup_steps));
  }
}

double LrScheduler::factor(int64_t step) const {
  if (step < warmup_steps_) {
    return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps_));
  }
  const double decay_steps =
      static_cast<double>(std::max<int64_t>(1, total_steps_ - warmup_steps_));
  const double progress = static_cast<double>(step - warmup_steps_) / decay_steps;
  switch (schedule_) {
    case LrSchedule::kConstant:
      return 1.0;
    case LrSchedule::kLinear:
      return std::max(0.0, 1.0 - progress);
    case LrSchedule::kCosine:
      return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
  }
  return 1.0;
}

int64_t warmup_steps_for(const TrainingArguments& args, int64_t total_steps) {
  if (args.warmup_steps > 0) return args.warmup_steps;
  return static_cast<int64_t>(std::ceil(args.warmup_ratio * static_cast<double>(total_steps)));
}

}  // namespace train
