// The experiments most controller tests start from: the learning_curve
// built-in on 2 CPUs (checkpointed_curve: 8 iterations, a checkpoint every
// iteration), run through the real controller with tunerun workers.
//
// Built with TUNERUN_TEST_LAUNCHER="sim" (tests/sim), the same experiments
// run on simulated ranks (tune/sim/sim_launcher.h) instead: the scenarios
// of the files compiled so assert the same of the simulated launcher. A
// test case that needs real processes is skipped there:
//   TEST_CASE("..." * doctest::skip(test::kSimulatedRanks))
// With TUNERUN_TEST_TIME="virtual" too, they run in virtual time
// ([simulation] time).
#pragma once

#include <string_view>

#include "test_util.h"
#include "tune/controller.h"

namespace tune::test {

#ifdef TUNERUN_TEST_LAUNCHER
inline constexpr bool kSimulatedRanks = std::string_view(TUNERUN_TEST_LAUNCHER) == "sim";
#else
inline constexpr bool kSimulatedRanks = false;
#endif
#ifdef TUNERUN_TEST_TIME
inline constexpr bool kVirtualTime = std::string_view(TUNERUN_TEST_TIME) == "virtual";
#else
inline constexpr bool kVirtualTime = false;
#endif

// The learning_curve built-in maximising accuracy on 2 CPUs, nothing else set.
inline ExperimentSpec curve(const ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec;
  spec.name = name;
  spec.storage_path = dir.path();
  spec.metric = "accuracy";
  spec.mode = Mode::kMax;
  spec.total_cpus = 2;
  spec.trainable.name = "learning_curve";
  if (kSimulatedRanks) spec.cluster.launcher = "sim";
#ifdef TUNERUN_TEST_TIME
  spec.simulation.time = TUNERUN_TEST_TIME;
#endif
  return spec;
}

inline ExperimentSpec checkpointed_curve(const ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec = curve(dir, name);
  spec.param_space.set("iterations", 8);
  spec.param_space.set("checkpoint_every", 1);
  return spec;
}

// Runs `spec` with tunerun workers, printing nothing.
inline ExperimentSummary run_quietly(const ExperimentSpec& spec) {
  TrialController controller(spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0});
  return controller.run();
}

// Three trials, one at a time, the first failing at iteration 3 (fail_at
// strikes first attempts only), under fail_fast: the run ends at that
// error, interrupted and resumable.
inline void stop_at_first_error(ExperimentSpec& spec) {
  spec.max_concurrent_trials = 1;
  spec.param_space.set("fail_at", grid_search({3, 0, 0}));
  spec.fail_fast = true;
}

// Resumes `spec`'s experiment, its errored trials restarting from scratch,
// printing nothing.
inline ExperimentSummary resume_quietly(const ExperimentSpec& spec) {
  TrialController controller(
      spec,
      {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0, .resume = true, .restart_errored = true});
  return controller.run();
}

}  // namespace tune::test
