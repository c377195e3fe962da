// The learning_curve built-in's model (train/builtins/builtins.h): what its
// config says, the metrics of each iteration, and the checkpoint it saves.
// Shared by the trainable that runs in worker processes and by the
// simulated ranks of tune/launch/sim/, so a sweep of learning_curve reports the
// same numbers whether its ranks are processes or simulated.
#pragma once

#include <cstdint>
#include <filesystem>

#include "core/config.h"

namespace train {

struct LearningCurve {
  int64_t iterations = 100;
  double ceiling = 0.9;
  double speed = 0.1;
  double sleep_s = 0;            // each iteration's duration
  int64_t checkpoint_every = 0;  // 0: never
  // Also checkpoint where the scheduler may act (train::should_checkpoint).
  bool checkpoint_for_scheduler = false;
  // Failure injection, on a trial's first attempt only: at that iteration
  // raise (fail_at), exit with code 3 (crash_at), stop silently (hang_at),
  // exit 0 without a word (vanish_at); 0: never.
  int64_t fail_at = 0;
  int64_t crash_at = 0;
  int64_t hang_at = 0;
  int64_t vanish_at = 0;

  // Reads the keys above from a trial's config, with the defaults above.
  static LearningCurve from_config(const tune::Config& config);

  // {"accuracy": ceiling * (1 - exp(-speed * t)), "loss": 1 - accuracy}.
  tune::Json metrics(int64_t t) const;
  bool checkpoints_at(int64_t t) const { return checkpoint_every > 0 && t % checkpoint_every == 0; }
};

// Saves iteration `t` as the curve's checkpoint into `dir` (state.json).
void write_curve_checkpoint(const std::filesystem::path& dir, int64_t t);
// The iteration a checkpoint of the curve saved. Throws tune::Error naming
// the file when it cannot be read.
int64_t read_curve_checkpoint(const std::filesystem::path& dir);

}  // namespace train
