// Python objects as the controller's plug-ins: callbacks (tune.Callback) and
// stoppers (tune.Stopper, or a function (trial_id, result) -> bool). The
// controller calls them on its event-loop thread, which runs without the GIL
// (fit() released it); each call takes the GIL for its duration. A Python
// exception in one propagates out of fit() (the experiment stays restorable).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "tune/callback.h"
#include "tune/stopper.h"

namespace tunerun_py {

namespace py = pybind11;

std::shared_ptr<tune::Callback> python_callback(py::object callback);
std::shared_ptr<tune::Stopper> python_stopper(py::object stopper);

}  // namespace tunerun_py
