#include "bindings/run.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "bindings/json_py.h"
#include "bindings/plugins_py.h"
#include "bindings/stoppers_py.h"
#include "search/domain_spec.h"
#include "tune/builtin_stoppers.h"
#include "tune/execution/controller.h"
#include "tune/launch/make_launcher.h"
#include "tune/result_grid.h"
#include "tune/spec/fields.h"
#include "tune/spec/hostfile.h"
#include "tune/spec/json.h"
#include "tune/spec/plugins.h"
#include "tune/spec/validation.h"

namespace tunerun_py {
namespace {

tune::ParamSpace to_param_space(py::dict dict, const std::string& prefix) {
  tune::ParamSpace space;
  for (auto [key, value] : dict) {
    if (!py::isinstance<py::str>(key)) {
      throw py::value_error(fmt::format("{}: key {} is not a str",
                                        prefix.empty() ? "param_space" : prefix,
                                        py::repr(key).cast<std::string>()));
    }
    const std::string name = key.cast<std::string>();
    const std::string where = prefix.empty() ? "param_space." + name : prefix + "." + name;
    try {
      if (py::hasattr(value, "_resolve")) {
        space.set(name, python_sample_from(py::reinterpret_borrow<py::object>(value)));
      } else if (py::hasattr(value, "_spec")) {
        space.set(name, tune::domain_from_spec(to_json(value.attr("_spec")(), where)));
      } else if (py::isinstance<py::dict>(value)) {
        space.set(name, to_param_space(value.cast<py::dict>(), where));
      } else {
        space.set(name, to_json(value, where));
      }
    } catch (const tune::ConfigError& e) {
      throw py::value_error(fmt::format("{}: {}", where, e.message()));
    }
  }
  return space;
}

// The spec dict's entries that hold Python objects rather than JSON.
bool holds_objects(const std::string& key) {
  return key == "param_space" || key == "stop" || key == "custom_searcher" ||
         key == "custom_scheduler" || key == "scheduler_explore_fn" ||
         key == "trial_dirname_creator";
}

// dict[key], or None.
py::object entry(const py::dict& dict, const char* key) {
  return dict.contains(key) ? py::object(dict[key]) : py::none();
}

// The dict is the JSON form of a spec (tune/spec/json.h) plus
// Python objects: param_space with domain objects, searcher and scheduler
// adapters, a stopper. Finished as every front end's spec is.
tune::ExperimentSpec to_spec(const py::dict& dict) {
  tune::Json json = tune::Json::object();
  for (auto [key, value] : dict) {
    const std::string name = py::str(key);
    if (!holds_objects(name)) json[name] = to_json(value, name);
  }
  tune::ExperimentSpec spec;
  tune::read_spec_json(spec, json);
  const py::object space = entry(dict, "param_space");
  if (!space.is_none()) {
    if (!py::isinstance<py::dict>(space)) throw py::value_error("param_space: expected a dict");
    spec.param_space = to_param_space(space.cast<py::dict>(), "");
  }
  // A Python searcher or scheduler arrives as its adapter object, a named
  // C++ one as its JSON above.
  if (dict.contains("custom_searcher")) {
    spec.custom_searcher = python_searcher(dict["custom_searcher"]);
  }
  if (dict.contains("custom_scheduler")) {
    spec.custom_scheduler = python_scheduler(dict["custom_scheduler"]);
  }

  // A tune.stopper object, a Python stopper (callable) or Ray's stop dict
  // {metric: bound}.
  const py::object stop = entry(dict, "stop");
  if (py::isinstance<py::dict>(stop)) {
    const tune::Json bounds = to_json(stop, "stop");
    for (const auto& [key, bound] : bounds.items()) {
      if (!bound.is_number()) {
        throw py::value_error(fmt::format("stop.{}: expected a number, got {}", key, bound.dump()));
      }
      spec.stop.push_back({key, bound.get<double>()});
    }
  } else if (!stop.is_none()) {
    spec.stoppers.push_back(to_stopper(stop));
  }
  const tune::Json budget = json.value("time_budget_s", tune::Json());
  if (!budget.is_null() && !budget.is_number()) {
    throw py::value_error(fmt::format("time_budget_s: expected a number, got {}", budget.dump()));
  }
  if (budget.is_number() && budget.get<double>() > 0) {
    spec.stoppers.push_back(std::make_shared<tune::TimeoutStopper>(
        std::chrono::duration<double>(budget.get<double>())));
  }
  // PBT's custom_explore_fn and callable hyperparam_mutations, as one Python
  // function (tunerun/tune/schedulers/_python_explore.py); the rest is the
  // C++ PBT, checked here as finish_spec checks a named scheduler.
  const py::object explore = entry(dict, "scheduler_explore_fn");
  if (!explore.is_none()) {
    try {
      spec.custom_scheduler = python_explored_pbt(spec.scheduler_options, explore);
    } catch (const tune::ConfigError& e) {
      throw tune::ConfigError::at_key("scheduler." + e.key(), e.message());
    }
  }
  const py::object dirname = entry(dict, "trial_dirname_creator");
  if (!dirname.is_none()) spec.trial_dirname = python_trial_dirname(dirname);
  tune::finish_spec(spec);
  spec.source = tune::experiment_spec_to_json(spec);
  spec.source["api"] = "python";
  return spec;
}

// Where launcher "ssh" finds tunerun-ssh-rank: the interpreter that runs
// this module is no tunerun program to look beside, so the folders of the
// installed or built programs, relative to this module's file
// (bindings/CMakeLists.txt).
std::vector<std::string> program_dirs() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&program_dirs), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  const auto dir = std::filesystem::absolute(info.dli_fname).parent_path();
  return {(dir / TUNERUN_PROGRAMS_FROM_MODULE).lexically_normal().string(),
          (dir / TUNERUN_BUILT_PROGRAMS_FROM_MODULE).lexically_normal().string()};
}

// The checks fit() would make before it writes anything, raising ValueError;
// returns the effective spec, as `tunerun validate --print-config --json`
// prints a sweep file's. Launcher "ssh" as `tunerun run` takes it: its
// hostfile read, and no control address is loopback, which the hosts
// cannot reach (a script has no --control-address to give one later).
py::object check_spec(const py::dict& dict) {
  const tune::ExperimentSpec spec = to_spec(dict);
  tune::Plugins::from_spec(spec);
  tune::ExperimentSpec checked = spec;
  if (spec.cluster.launcher == "ssh" && spec.cluster.control_address.empty() &&
      spec.cluster.control_interface.empty()) {
    checked.cluster.control_address = "127.0.0.1";
  }
  tune::check_control_address(checked);
  if (spec.cluster.launcher == "ssh") {
    tune::check_ssh_cluster(spec);
    tune::read_hostfile(spec.cluster.hostfile);
  }
  return to_python(tune::experiment_spec_to_json(spec));
}

// The spec table's rows (tune/spec/fields.h), for tunerun/tune/tuner.py.
py::list spec_fields() {
  py::list rows;
  for (const tune::SpecField& field : tune::spec_fields()) {
    py::dict row;
    row["key"] = std::string(field.key);
    row["type"] = std::string(field.access.type);
    row["default"] = to_python(tune::field_default(field));
    row["doc"] = std::string(field.doc);
    row["rule"] = std::string(field.rule);
    row["python"] = std::string(field.python);
    row["example"] = to_python(tune::Json::parse(field.example));
    rows.append(row);
  }
  return rows;
}

py::dict result_to_python(const tune::Result& r) {
  py::dict out;
  out["trial_id"] = r.trial_id;
  out["status"] = std::string(tune::to_string(r.status));
  out["config"] = to_python(r.config);
  out["metrics"] = to_python(r.metrics);
  out["checkpoint"] = r.checkpoint ? py::object(py::str(r.checkpoint->string())) : py::none();
  py::list best;
  for (const auto& [path, result] : r.best_checkpoints) {
    best.append(py::make_tuple(path.string(), to_python(result)));
  }
  out["best_checkpoints"] = best;
  out["path"] = r.path.string();
  out["error"] = r.error ? py::object(py::str(*r.error)) : py::none();
  py::list history;
  for (const auto& row : r.history) history.append(to_python(row));
  out["history"] = history;
  return out;
}

}  // namespace

void add_run_functions(py::module_& m) {
  m.def(
      "sample_domain",
      [](const py::dict& spec, size_t size, uint64_t seed) {
        const tune::Domain domain = tune::domain_from_spec(to_json(spec, "domain"));
        tune::Rng rng(seed);
        py::list values;
        for (size_t i = 0; i < size; ++i) values.append(to_python(domain.sample(rng)));
        return values;
      },
      py::arg("spec"), py::arg("size"), py::arg("seed"),
      "`size` values of a domain ({KIND: [ARGS]}) drawn as the engine's searchers draw them.");

  m.def("check_spec", &check_spec, py::arg("spec"),
        "Raises ValueError naming the key of the first problem in an experiment spec; returns "
        "the effective spec (defaults filled in) as a dict.");
  m.def("spec_fields", &spec_fields,
        "The experiment spec's fields, one dict each: key (as a sweep file writes it), type, "
        "default, doc, rule (its message when broken, or empty), python (the keyword that "
        "sets it, or empty) and example.");

  m.def(
      "fit",
      [](const py::dict& dict, std::vector<std::string> worker_argv, const py::list& callbacks,
         int verbosity, bool resume, bool resume_errored, bool restart_errored,
         std::vector<std::string> zygote_argv) {
        tune::ExperimentSpec spec = to_spec(dict);
        tune::ControllerOptions options;
        for (auto callback : callbacks) {
          options.callbacks.push_back(
              python_callback(py::reinterpret_borrow<py::object>(callback)));
        }
        // The launcher is the spec's cluster settings' choice
        // (tune/launch/make_launcher.h); local ranks fork from the zygote.
        options.zygote_argv = std::move(zygote_argv);
        options.worker_argv = std::move(worker_argv);
        options.program_dirs = program_dirs();
        options.verbosity = verbosity;
        options.resume = resume;
        options.resume_errored = resume_errored;
        options.restart_errored = restart_errored;
        // Ctrl-C pauses the running trials at their next checkpoint and ends
        // fit() restorably, as in the CLI; Python's handlers are back afterwards.
        options.handle_signals = true;
        tune::ExperimentSummary summary;
        {
          // The controller runs without the GIL: other Python threads go on.
          py::gil_scoped_release release;
          summary = tune::TrialController(std::move(spec), std::move(options)).run();
        }
        return py::make_tuple(summary.experiment_dir.string(), summary.interrupted);
      },
      py::arg("spec"), py::arg("worker_argv"), py::arg("callbacks") = py::list(),
      py::arg("verbosity") = 1, py::arg("resume") = false, py::arg("resume_errored") = false,
      py::arg("restart_errored") = false, py::arg("zygote_argv") = std::vector<std::string>(),
      "Runs the experiment; returns (its directory, whether a signal or fail_fast ended it "
      "early). Trial failures are not exceptions. With `zygote_argv`, local ranks are forked "
      "from that zygote (tune/launch/local/zygote.h); ranks of other launchers are not.");

  py::class_<tune::ResultGrid>(m, "ResultGridData")
      .def_static("from_experiment",
                  [](const std::string& dir) { return tune::ResultGrid::from_experiment(dir); })
      .def("__len__", &tune::ResultGrid::size)
      .def("result",
           [](const tune::ResultGrid& g, size_t i) {
             if (i >= g.size()) throw py::index_error("no result " + std::to_string(i));
             return result_to_python(g[i]);
           })
      .def(
          "best_index",
          [](const tune::ResultGrid& g, const std::string& metric, const std::string& mode,
             const std::string& scope, bool filter_nan_and_inf) {
            std::optional<tune::Mode> m;
            if (!mode.empty()) {
              m = tune::mode_from_string(mode);
              if (!m)
                throw py::value_error("mode must be \"min\" or \"max\", got \"" + mode + "\"");
            }
            const tune::Result& best = g.get_best_result(metric, m, scope, filter_nan_and_inf);
            return static_cast<size_t>(&best - &g[0]);
          },
          py::arg("metric") = "", py::arg("mode") = "", py::arg("scope") = "last",
          py::arg("filter_nan_and_inf") = true)
      .def("pareto_front_indices",
           [](const tune::ResultGrid& g) {
             std::vector<size_t> out;
             for (const tune::Result* r : g.get_pareto_front()) {
               out.push_back(static_cast<size_t>(r - &g[0]));
             }
             return out;
           })
      .def("errors", &tune::ResultGrid::errors)
      .def_property_readonly("num_errors", &tune::ResultGrid::num_errors)
      .def_property_readonly("num_terminated", &tune::ResultGrid::num_terminated)
      .def_property_readonly("experiment_path", [](const tune::ResultGrid& g) {
        return g.experiment_path().string();
      });
}

}  // namespace tunerun_py
