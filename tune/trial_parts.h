// The parts of the controller that the classes of the trial side
// (tune/trial_runs.h lists them) work with, by reference: ControllerParts
// are the controller's, TrialParts adds the trial table and the checkpoints
// that TrialRuns owns.
#pragma once

#include "storage/checkpoint_manager.h"
#include "storage/experiment_store.h"
#include "tune/control_channel.h"
#include "tune/controller.h"
#include "tune/plugins.h"
#include "tune/resource_pool.h"
#include "tune/run_log.h"
#include "tune/trial_table.h"
#include "tune/worker_groups.h"

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
