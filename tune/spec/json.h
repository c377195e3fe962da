// The experiment spec as JSON, keyed as a sweep file writes it
// (tune/spec/sweep_file.h): every row of the spec table (tune/spec/fields.h) at
// its key's path, and the parts that are not rows. `tunerun validate
// --print-config` prints it; Python hands its spec in this shape
// (bindings/run.cpp).
#pragma once

#include <string>

#include "core/config.h"
#include "tune/spec/experiment.h"

namespace tune {

// Every row's value, defaults filled in ({"name", "num_samples", ...,
// "failure": {"max_failures", ...}, ...}), resources.cpus as the machine's
// core count when the spec leaves it at 0, resources.gpus as the GPUs it
// lends when -1, trainable.threads_per_worker as the threads a rank gets;
// and, not rows: trainable {name, library, command, working_dir} (those
// set), param_space as its domains' describe() strings ("uniform(-5, 5)"),
// stop {key: bound | {"at_most": bound}}, and each plug-in's options beside
// search.algorithm and scheduler.type (those the spec gives, not the
// plug-in's defaults for the others). A C++ or Python plug-in object shows as
// "custom". For display and for read_spec_json; param_space and stop do not
// load back.
Json experiment_spec_to_json(const ExperimentSpec& spec);

// Sets every row `json` has a value for (null: none, the default stays),
// trainable.name, and the plug-ins' options (the keys of "search" and
// "scheduler" that are not rows). Throws ConfigError keyed by the field for
// a value of another type; ranges are finish_spec's (tune/spec/validation.h).
void read_spec_json(ExperimentSpec& spec, const Json& json);

// `object` (a JSON object) as a TOML document: nested objects become
// [sections], objects inside lists inline tables; nulls and non-finite numbers
// (no TOML form) are left out. Throws tune::Error for a non-object.
std::string json_to_toml(const Json& object);

}  // namespace tune
