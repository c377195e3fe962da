// The worker side of `import tunerun`: a Python function as a registered
// trainable, the C++ worker runtime (train/worker_runtime.h) as the rank's
// main loop, and the session calls a Python train function makes.
//
// The runtime runs without the GIL and takes it only to call the train
// function; train.report releases it while it waits for the controller's
// decision. When the controller stops the trial, report raises StopTrial, a
// BaseException (so `except Exception:` in user code does not swallow it):
// it must propagate out of the train function, which the runtime then
// counts as a normal end.
#pragma once

#include <pybind11/pybind11.h>

namespace tunerun_py {

namespace py = pybind11;

// Adds register_trainable, run_worker, is_worker, report, get_context,
// get_checkpoint, make_checkpoint_dir and StopTrial to `module`.
void add_worker_functions(py::module_& module);

}  // namespace tunerun_py
