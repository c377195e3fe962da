// tunerun._tunerun: the extension module under `import tunerun`. The Python
// package (tunerun/) is the API; this module is its engine room.
#include <pybind11/pybind11.h>

#include "bindings/run.h"
#include "bindings/worker.h"
#include "core/errors.h"

PYBIND11_MODULE(_tunerun, m) {
  m.doc() = "tunerun's C++ engine (controller, searchers, schedulers, store, worker runtime)";
  // Bad input is a ValueError, as in Ray; other engine errors stay RuntimeErrors.
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tune::ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  tunerun_py::add_run_functions(m);
  tunerun_py::add_worker_functions(m);
}
