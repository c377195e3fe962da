// finish_spec: the rules every ExperimentSpec meets before anything runs,
// applied once all of a front end's work is done, and the same for each:
// a sweep file (tune/spec/sweep_file.h), the C++ Tuner and train::TorchTrainer,
// Python (bindings/run.cpp), and a spec built by hand, which the controller
// finishes itself. Each field is checked by its row's rule
// (tune/spec/fields.h); the rules across fields are here.
#pragma once

#include <string>

#include "tune/spec/experiment.h"

namespace tune {

// Fills in the defaults that depend on other fields, then checks every
// rule. Finishing a finished spec changes nothing.
//
// Defaults: ranks beat every min(heartbeat_period_s, heartbeat_timeout_s / 4)
// seconds; a named "hyperband" scheduler beside BOHB gets for_bohb = true
// unless its options say (Ray's HyperBandForBOHB). A scheduler object's
// options are its own: the C++ API states for_bohb in HyperBandOptions.
//
// Throws ConfigError whose key() is the sweep-file key of the first problem
// ("trainable.num_workers", "search.algorithm", "scheduler.max_t") and whose
// message states the rule; the sweep-file reader adds its file and line.
void finish_spec(ExperimentSpec& spec);

// Whether the experiment can be written where the spec puts it: storage_path
// is a folder this process may write (or one it may create: its nearest
// existing parent is such a folder), and so is the experiment's folder if
// it exists. Throws ConfigError at key "storage_path" naming the path and
// what is wrong. Looks at the file system, unlike finish_spec: `validate`
// and the controller's start call it.
void check_storage_path(const ExperimentSpec& spec);

// The rules of the trainable.* fields for `resources` alone; `prefix` names
// their table in the error's key ("scaling_config.num_workers").
void validate_resources(const Resources& resources, const std::string& prefix);

}  // namespace tune
