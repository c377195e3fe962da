// validate_spec: the one check of an ExperimentSpec before anything runs,
// the same for a sweep file (tune/sweep_file.h) and the C++ API
// (tune::Tuner, train::TorchTrainer): every numeric field against one table
// of rules, keyed by the sweep file's dotted key.
#pragma once

#include "tune/experiment_spec.h"

namespace tune {

// Throws ConfigError whose key() is the sweep-file key of the first field
// out of range (e.g. "trainable.num_workers") and whose message states the
// rule ("must be between 1 and 1024").
void validate_spec(const ExperimentSpec& spec);

// The same rules for the resources alone; `prefix` names their table in the
// error's key ("trainable", "scaling_config").
void validate_resources(const Resources& resources, const std::string& prefix);

}  // namespace tune
