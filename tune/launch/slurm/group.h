// A trial group on Slurm as one srun job step (SlurmLauncher::launch makes
// it): srun's own lines say which node failed under it and which rank
// ended, squeue whether Slurm holds it pending; its end gives the CPUs
// back and tells the shared SlurmState (tune/launch/slurm/state.h) what it
// learnt of its nodes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tune/launch/launcher.h"
#include "tune/launch/process.h"

namespace tune::detail {

struct SlurmState;

// The group of srun `srun`, started as step `name` with rank r on node
// `nodes[r]` (`cpus` and `gpus` per rank, already counted as used there);
// srun's output goes to `log` from byte `log_offset` on, and `log_watch`
// (an inotify descriptor on it, or -1) wakes the controller when srun writes.
std::unique_ptr<LaunchedGroup> make_slurm_group(std::shared_ptr<SlurmState> state, std::string name,
                                                std::vector<int> nodes, int cpus, int gpus,
                                                ChildProcess srun, std::filesystem::path log,
                                                std::uintmax_t log_offset, int log_watch);

}  // namespace tune::detail
