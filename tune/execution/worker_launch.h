// How a trial's ranks are started: the argv and environment the controller
// gives each rank (train/worker_env.h names the variables the worker
// runtime reads), as a GroupLaunch for any Launcher.
#pragma once

#include <string>
#include <vector>

#include "tune/execution/trial.h"
#include "tune/launch/launcher.h"
#include "tune/spec/experiment.h"

namespace tune {

// The environment every worker inherits: the controller's, minus the
// variables it sets per rank, and minus CUDA_VISIBLE_DEVICES (`has_gpus`)
// and OMP_NUM_THREADS (`threads_per_worker` set) when it sets those.
std::vector<std::string> inherited_environment(bool has_gpus, bool threads_per_worker);

struct WorkerLaunchContext {
  std::vector<std::string> argv;  // the worker executable and its arguments
  std::vector<std::string> env;   // inherited_environment()
  std::string controller;         // the control channel's endpoint
  std::string server_key;         // its CURVE public key (tune/channel/router.h)
  bool has_gpus = false;          // the machine lends GPUs: every rank gets CUDA_VISIBLE_DEVICES
  bool reuse = false;             // ranks stay for the next trial after DONE
};

// The launch of `trial`'s group for this attempt, of trial.world_size
// ranks: `master_port` is its rendezvous port, `gpus` each rank's devices.
GroupLaunch worker_launch(const WorkerLaunchContext& context, const ExperimentSpec& spec,
                          const Trial& trial, int master_port,
                          const std::vector<std::vector<std::string>>& gpus);

// The launch of a spare group (WorkerGroupOptions::prestart) of `spec`'s
// ranks: they say HELLO as attempt `serial` of train::kSpareTrialId, write
// nothing until a START names their trial and its log files, and have no
// GPUs (spares are for trainables that take none).
GroupLaunch spare_launch(const WorkerLaunchContext& context, const ExperimentSpec& spec,
                         int serial);

}  // namespace tune
