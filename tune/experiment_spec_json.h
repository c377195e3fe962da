// The effective experiment spec as data, for `tunerun validate
// --print-config`: every field with its default filled in, keyed as a sweep
// file writes it (tune/sweep_file.h). For display, not for loading back:
// domains appear as their describe() strings ("uniform(-5, 5)"), and a
// plug-in's options are the ones the file gave (the plug-in's own defaults
// for the others are not listed).
#pragma once

#include <string>

#include "core/config.h"
#include "tune/experiment_spec.h"

namespace tune {

// {"name", "storage_path", "metric", "mode", "num_samples",
//  "max_concurrent_trials", "seed", "trainable": {...}, "param_space": {...},
//  "search": {"algorithm", options...}, "scheduler": {"type", options...},
//  "stop": {key: bound | {"at_most": bound}}, "resources": {"cpus"},
//  "failure": {"heartbeat_timeout_s"}}. resources.cpus is the machine's core
// count when the spec leaves it at 0. Custom C++ plug-in objects show as
// "custom".
Json experiment_spec_to_json(const ExperimentSpec& spec);

// `object` (a JSON object) as a TOML document: nested objects become
// [sections], objects inside lists inline tables; nulls and non-finite numbers
// (no TOML form) are left out. Throws tune::Error for a non-object.
std::string json_to_toml(const Json& object);

}  // namespace tune
