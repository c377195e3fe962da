// The driver side of `import tunerun`: an experiment described by the Python
// layer (tunerun/tune/tuner.py builds the dict) run by the C++ controller,
// and its results read back.
//
// The spec dict is the spec's JSON form (tune/spec/json.h): the
// spec table's fields at their keys (tune/spec/fields.h; tuner.py fills them
// from the Python keywords the table names), trainable {name, num_workers,
// cpus_per_worker, gpus_per_worker}, search {"algorithm", options...},
// scheduler {"type", options...}; and Python objects: param_space (a dict
// whose values are constants, nested dicts, or domain objects with a
// `_spec()` method returning {"KIND": [ARGS]} as in search/domain_spec.h),
// custom_searcher / custom_scheduler (adapters: bindings/plugins_py.h), stop
// ({metric: bound}, or a Python stopper), and time_budget_s. Missing keys and
// None keep ExperimentSpec's defaults.
#pragma once

#include <pybind11/pybind11.h>

namespace tunerun_py {

namespace py = pybind11;

// Adds check_spec, spec_fields, fit and the ResultGrid reader to `module`.
void add_run_functions(py::module_& module);

}  // namespace tunerun_py
