#include "bindings/run.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "bindings/json_py.h"
#include "bindings/plugins_py.h"
#include "bindings/zygote.h"
#include "search/domain_spec.h"
#include "tune/controller.h"
#include "tune/experiment_spec_json.h"
#include "tune/plugins.h"
#include "tune/result_grid.h"
#include "tune/spec_validation.h"
#include "tune/stoppers.h"

namespace tunerun_py {
namespace {

// Reads optional fields of one dict, naming the dict's key in errors.
class Fields {
 public:
  Fields(py::dict dict, std::string prefix) : dict_(std::move(dict)), prefix_(std::move(prefix)) {}

  template <class T>
  void read(const char* key, T& out) const {
    if (!dict_.contains(key) || dict_[key].is_none()) return;
    try {
      out = dict_[key].cast<T>();
    } catch (const py::cast_error&) {
      throw py::value_error(fmt::format("{}{}: expected a {}, got {}", prefix_, key,
                                        py::type_id<T>(),
                                        py::repr(dict_[key]).cast<std::string>()));
    }
  }
  tune::Json json(const char* key) const {
    return dict_.contains(key) ? to_json(dict_[key], prefix_ + key) : tune::Json::object();
  }
  py::dict dict(const char* key) const {
    if (!dict_.contains(key) || dict_[key].is_none()) return {};
    if (!py::isinstance<py::dict>(dict_[key])) {
      throw py::value_error(fmt::format("{}{}: expected a dict", prefix_, key));
    }
    return dict_[key].cast<py::dict>();
  }
  tune::Mode mode(const char* key, tune::Mode fallback) const {
    std::string text;
    read(key, text);
    if (text.empty()) return fallback;
    if (auto mode = tune::mode_from_string(text)) return *mode;
    throw py::value_error(
        fmt::format("{}{}: must be \"min\" or \"max\", got \"{}\"", prefix_, key, text));
  }

 private:
  py::dict dict_;
  std::string prefix_;
};

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

tune::ExperimentSpec to_spec(const py::dict& dict) {
  const Fields f(dict, "");
  tune::ExperimentSpec spec;
  f.read("name", spec.name);
  std::string storage = spec.storage_path.string();
  f.read("storage_path", storage);
  spec.storage_path = storage;
  f.read("metric", spec.metric);
  spec.mode = f.mode("mode", spec.mode);
  f.read("num_samples", spec.num_samples);
  f.read("max_concurrent_trials", spec.max_concurrent_trials);
  f.read("seed", spec.seed);
  f.read("reuse_workers", spec.reuse_workers);
  f.read("prestart_workers", spec.prestart_workers);
  f.read("max_failures", spec.max_failures);
  f.read("fail_fast", spec.fail_fast);
  f.read("num_to_keep", spec.num_to_keep);
  f.read("checkpoint_score_attribute", spec.checkpoint_score_attribute);
  spec.checkpoint_score_order = f.mode("checkpoint_score_order", spec.checkpoint_score_order);
  f.read("total_cpus", spec.total_cpus);

  const Fields t(f.dict("trainable"), "trainable.");
  t.read("name", spec.trainable.name);
  t.read("num_workers", spec.trainable.num_workers);
  t.read("cpus_per_worker", spec.trainable.cpus_per_worker);
  t.read("gpus_per_worker", spec.trainable.gpus_per_worker);
  t.read("threads_per_worker", spec.trainable.threads_per_worker);

  spec.param_space = to_param_space(f.dict("param_space"), "");

  // A Python searcher or scheduler arrives as its adapter object, a named
  // C++ one as a dict of options.
  if (dict.contains("custom_searcher")) {
    spec.custom_searcher = python_searcher(dict["custom_searcher"]);
  }
  if (dict.contains("custom_scheduler")) {
    spec.custom_scheduler = python_scheduler(dict["custom_scheduler"]);
  }
  tune::Json search = f.json("search");
  if (search.contains("algorithm")) {
    spec.search_algorithm = search["algorithm"].get<std::string>();
    search.erase("algorithm");
  }
  spec.search_options = search;
  tune::Json scheduler = f.json("scheduler");
  if (scheduler.contains("type")) {
    spec.scheduler = scheduler["type"].get<std::string>();
    scheduler.erase("type");
  }
  spec.scheduler_options = scheduler;

  // A Python stopper (callable) or Ray's stop dict {metric: bound}.
  const bool python_stop =
      dict.contains("stop") && !dict["stop"].is_none() && !py::isinstance<py::dict>(dict["stop"]);
  if (python_stop) spec.stoppers.push_back(python_stopper(dict["stop"]));
  const tune::Json stop = python_stop ? tune::Json::object() : f.json("stop");
  for (const auto& [key, bound] : stop.items()) {
    if (!bound.is_number()) {
      throw py::value_error(fmt::format("stop.{}: expected a number, got {}", key, bound.dump()));
    }
    spec.stop.push_back({key, bound.get<double>()});
  }
  double time_budget_s = 0;
  f.read("time_budget_s", time_budget_s);
  if (time_budget_s > 0) {
    spec.stoppers.push_back(
        std::make_shared<tune::TimeoutStopper>(std::chrono::duration<double>(time_budget_s)));
  }
  spec.source = tune::experiment_spec_to_json(spec);
  spec.source["api"] = "python";
  return spec;
}

// The checks fit() would make before it writes anything, raising ValueError.
void check_spec(const py::dict& dict) {
  tune::ExperimentSpec spec = to_spec(dict);
  tune::finish_spec(spec);
  tune::Plugins::from_spec(spec);
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
        "Raises ValueError naming the key of the first problem in an experiment spec.");

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
        if (!zygote_argv.empty()) {
          options.launcher = std::make_shared<ZygoteLauncher>(std::move(zygote_argv), worker_argv);
        }
        options.worker_argv = std::move(worker_argv);
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
      "early). Trial failures are not exceptions. With `zygote_argv`, ranks are forked from "
      "that zygote (bindings/zygote.h).");

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
      .def("errors", &tune::ResultGrid::errors)
      .def_property_readonly("num_errors", &tune::ResultGrid::num_errors)
      .def_property_readonly("num_terminated", &tune::ResultGrid::num_terminated)
      .def_property_readonly("experiment_path", [](const tune::ResultGrid& g) {
        return g.experiment_path().string();
      });
}

}  // namespace tunerun_py
