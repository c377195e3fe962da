// The experiment most controller tests start from: the learning_curve
// built-in, 8 iterations, a checkpoint every iteration, 2 CPUs, run through
// the real controller with tunerun workers.
#pragma once

#include "test_util.h"
#include "tune/controller.h"

namespace tune::test {

inline ExperimentSpec checkpointed_curve(const ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec;
  spec.name = name;
  spec.storage_path = dir.path();
  spec.metric = "accuracy";
  spec.mode = Mode::kMax;
  spec.total_cpus = 2;
  spec.trainable.name = "learning_curve";
  spec.param_space.set("iterations", 8);
  spec.param_space.set("checkpoint_every", 1);
  return spec;
}

inline ExperimentSummary run_quietly(const ExperimentSpec& spec) {
  TrialController controller(spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0});
  return controller.run();
}

}  // namespace tune::test
