// Python objects as the controller's plug-ins: callbacks (tune.Callback),
// stoppers (tune.Stopper, or a function (trial_id, result) -> bool), and
// searchers and schedulers (subclasses of tune.search.Searcher and
// tune.schedulers.TrialScheduler, through the adapters of
// tunerun/tune/_adapters.py, which turn Ray's calling conventions into these
// plain-value calls). The controller calls them on its event-loop thread,
// which runs without the GIL (fit() released it); each call takes the GIL for
// its duration. A Python exception in one propagates out of fit() (the
// experiment stays restorable).
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>

#include "schedulers/trial_scheduler.h"
#include "search/domain.h"
#include "search/searcher.h"
#include "tune/callback.h"
#include "tune/stopper.h"

namespace tunerun_py {

namespace py = pybind11;

std::shared_ptr<tune::Callback> python_callback(py::object callback);
std::shared_ptr<tune::Stopper> python_stopper(py::object stopper);

// `adapter`: a tunerun.tune._adapters.SearcherAdapter. Its suggest returns a
// config dict, None (not ready) or "FINISHED"; save returns JSON-able data.
std::shared_ptr<tune::search::Searcher> python_searcher(py::object adapter);

// `adapter`: a tunerun.tune._adapters.SchedulerAdapter. Trials reach it as
// (trial_id, status, config, last_result or None, checkpoint_iteration);
// on_trial_result returns "CONTINUE", "PAUSE" or "STOP", choose_trial_to_run
// an index into its candidates or -1.
std::shared_ptr<tune::schedulers::TrialScheduler> python_scheduler(py::object adapter);

// TuneConfig(trial_dirname_creator=) as ExperimentSpec::trial_dirname:
// namer(trial_id, config dict) -> str (tunerun/tune/tuner.py builds it).
std::function<std::string(const std::string&, const tune::Json&)> python_trial_dirname(
    py::object namer);

// The C++ PBT from its options table, exploring with a Python function
// (config dict -> config dict) after its own mutations.
std::shared_ptr<tune::schedulers::TrialScheduler> python_explored_pbt(const tune::Json& options,
                                                                      py::object explore);

// tune.sample_from(func) as the engine's conditional domain: `sample_from`
// is the Python object; its _resolve(config) gets the config as resolved so
// far and returns the value.
tune::Domain python_sample_from(py::object sample_from);

}  // namespace tunerun_py
