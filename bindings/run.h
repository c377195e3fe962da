// The driver side of `import tunerun`: an experiment described by the Python
// layer (tunerun/tune/tuner.py builds the dict) run by the C++ controller,
// and its results read back.
//
// The spec dict: name, storage_path, metric, mode ("min" | "max"),
// num_samples, max_concurrent_trials, seed, reuse_workers, max_failures,
// fail_fast, num_to_keep, checkpoint_score_attribute, checkpoint_score_order,
// time_budget_s, total_cpus, trainable {name, num_workers, cpus_per_worker,
// gpus_per_worker, threads_per_worker}, param_space (a dict whose values are
// constants, nested dicts, or domain objects with a `_spec()` method returning
// {"KIND": [ARGS]} as in search/domain_spec.h), search {"algorithm", options...},
// scheduler {"type", options...}, stop ({metric: bound}, or a Python stopper:
// bindings/plugins_py.h). Missing keys keep
// ExperimentSpec's defaults.
#pragma once

#include <pybind11/pybind11.h>

namespace tunerun_py {

namespace py = pybind11;

// Adds check_spec, fit and the ResultGrid reader to `module`.
void add_run_functions(py::module_& module);

}  // namespace tunerun_py
