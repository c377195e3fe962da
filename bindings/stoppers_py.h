// RunConfig(stop=...) objects as the controller's stoppers: the classes of
// tunerun/tune/stopper.py become the C++ stoppers of tune/builtin_stoppers.h (no
// Python per result); any other object is a Python stopper (plugins_py.h).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "tune/stopper.h"

namespace tunerun_py {

namespace py = pybind11;

// Throws py::value_error naming the stopper for a bad option.
std::shared_ptr<tune::Stopper> to_stopper(py::handle stopper);

}  // namespace tunerun_py
