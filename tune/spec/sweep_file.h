// Sweep files: an experiment described in TOML, as `tunerun sweep.toml` reads it.
//
//   name = "quadratic"          # experiment name (default: the file's stem)
//   storage_path = "runs"       # experiment dir = storage_path/name (relative to the CWD)
//   metric = "loss"
//   mode = "min"                # or "max"
//   num_samples = 4             # repeats of the grid (Ray's num_samples)
//   max_concurrent_trials = 2   # 0 or absent: as many as the CPUs allow
//   reuse_workers = false       # true: finished trials' ranks run the next trials
//   seed = 7
//
//   [trainable]
//   builtin = "quadratic"       # a registered trainable
//   num_workers = 1             # ranks per trial
//   cpus_per_worker = 1
//   gpus_per_worker = 0         # whole GPUs per rank, as its CUDA_VISIBLE_DEVICES
//   threads_per_worker = 1      # OMP_NUM_THREADS; default: cpus_per_worker
//
//   [param_space]               # an inline table { kind = [...] } is a domain,
//   x = { uniform = [-5, 5] }   # a [section] is a nested space, anything else a constant
//   y = { grid_search = [-1, 0, 1] }
//   lr = { loguniform = [1e-4, 1e-1] }
//   layers = { randint = [1, 4] }       # upper bound exclusive
//   act = { choice = ["relu", "tanh"] }
//   [param_space.model]
//   width = 64
//
//   [search]      algorithm = "random" (options of the algorithm alongside)
//   [scheduler]   type = "fifo" (options alongside)
//   [stop]        training_iteration = 10     # stop once result >= value (Ray)
//                 loss = { at_most = 0.01 }   # or once result <= value
//   [resources]   cpus = 2, gpus = 1          # what the controller may use (default: all)
//   [failure]     heartbeat_timeout_s = 30, max_failures = 0 (-1: unlimited), fail_fast = false
//   [checkpoint]  num_to_keep = 0 (all), checkpoint_score_attribute = "",
//                 checkpoint_score_order = "max"
//   [cluster]     launcher = "auto", control_address = "" or control_interface = "",
//                 slurm_poll_s = 30
//
// Each key outside [trainable]'s builtin/name/library/command, [param_space],
// [stop] and the plug-ins' options is a row of the spec table
// (tune/spec/fields.h: its type, default, meaning and rule); `tunerun
// validate --print-config` prints them all with their values.
//
// Every error (TOML syntax, unknown key, wrong type, bad bound, unknown
// trainable or algorithm) is a tune::ConfigError carrying the file, the line
// and the dotted key.
#pragma once

#include <filesystem>
#include <string>

#include "tune/spec/experiment.h"

namespace tune {

ExperimentSpec load_sweep_file(const std::filesystem::path& path);

// As load_sweep_file, from text; `source_name` names it in errors.
ExperimentSpec parse_sweep(std::string_view text, const std::string& source_name);

}  // namespace tune
