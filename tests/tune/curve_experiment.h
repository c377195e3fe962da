// The experiments most controller tests start from: the learning_curve
// built-in on 2 CPUs (checkpointed_curve: 8 iterations, a checkpoint every
// iteration), run through the real controller with tunerun workers.
//
// In a binary whose kSimulatedRanks is true (tests/sim's conformance
// binaries), the same experiments run on simulated ranks
// (tune/launch/sim/launcher.h) instead: the scenario files linked there assert
// the same of the simulated launcher. A test case that needs real processes
// is skipped there:
//   TEST_CASE("..." * doctest::skip(test::kSimulatedRanks))
// With kVirtualTime too, they run in virtual time ([simulation] time).
#pragma once

#include "test_util.h"
#include "tune/execution/controller.h"

namespace tune::test {

// Defined once in each binary that includes this header, by
// scenario_ranks.cpp compiled with that binary's TUNERUN_TEST_LAUNCHER and
// TUNERUN_TEST_TIME: the scenario files compile once for tune_tests and
// both conformance binaries. Constant-initialised, so doctest::skip can
// read them while test cases register, before main.
extern const bool kSimulatedRanks;
extern const bool kVirtualTime;

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
  if (kVirtualTime) spec.simulation.time = "virtual";
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
