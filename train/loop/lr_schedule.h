// Learning-rate schedules with linear warmup, as Hugging Face's
// get_constant_schedule_with_warmup, get_linear_schedule_with_warmup and
// get_cosine_schedule_with_warmup (half a cosine): the rate an optimizer
// step uses is base_lr * factor(step), step counting from 0, so with warmup
// the first step's rate is 0, as in HF.
//
// The schedule's whole state is the step: a checkpoint that stores the
// optimizer step restores it.
#pragma once

#include <cstdint>

#include "train/loop/training_arguments.h"

namespace train {

class LrScheduler {
 public:
  // Throws tune::ConfigError when total_steps < 1 or warmup_steps < 0.
  LrScheduler(LrSchedule schedule, double base_lr, int64_t warmup_steps, int64_t total_steps);

  // The multiplier of base_lr for optimizer step `step` (0-based), in [0, 1].
  double factor(int64_t step) const;
  double lr(int64_t step) const { return base_lr_ * factor(step); }
  int64_t warmup_steps() const { return warmup_steps_; }
  int64_t total_steps() const { return total_steps_; }

 private:
  LrSchedule schedule_;
  double base_lr_;
  int64_t warmup_steps_;
  int64_t total_steps_;
};

// Warmup steps from the arguments: warmup_steps if > 0, else
// ceil(warmup_ratio * total_steps) (HF's get_warmup_steps).
int64_t warmup_steps_for(const TrainingArguments& args, int64_t total_steps);

}  // namespace train
