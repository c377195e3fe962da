// The parts of the controller that the classes of the trial side
// (tune/execution/trial_runs.h lists them) work with, by reference: ControllerParts
// are the controller's, TrialParts adds the trial table and the checkpoints
// that TrialRuns owns.
#pragma once

#include "storage/checkpoint_manager.h"
#include "storage/experiment_store.h"
#include "tune/channel/router.h"
#include "tune/execution/controller.h"
#include "tune/execution/resource_pool.h"
#include "tune/execution/run_log.h"
#include "tune/execution/trial_table.h"
#include "tune/launch/worker_groups.h"
#include "tune/spec/plugins.h"

namespace tune {

struct ControllerParts {
  const ExperimentSpec& spec;
  const ControllerOptions& options;
  storage::ExperimentStore& store;
  ResourcePool& pool;
  Plugins& plugins;
  WorkerGroups& groups;
  ControlChannel& channel;
  RunLog& log;
};

struct TrialParts : ControllerParts {
  TrialTable& trials;
  storage::CheckpointManager& checkpoints;
};

}  // namespace tune
