#include "bindings/plugins_py.h"

#include <pybind11/stl.h>

#include "bindings/json_py.h"
#include "schedulers/factory.h"

namespace tunerun_py {
namespace {

// Holds a Python object past the GIL's release: its last reference is
// dropped with the GIL held.
class Held {
 public:
  explicit Held(py::object object) : object_(new py::object(std::move(object))) {}
  ~Held() {
    py::gil_scoped_acquire gil;
    delete object_;
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  const py::object& get() const { return *object_; }

 private:
  py::object* object_;
};

class PythonCallback final : public tune::Callback {
 public:
  explicit PythonCallback(py::object callback) : callback_(std::move(callback)) {}
  void on_trial_start(const std::string& trial_id, const tune::Json& config) override {
    py::gil_scoped_acquire gil;
    callback_.get().attr("on_trial_start")(trial_id, to_python(config));
  }
  void on_trial_result(const std::string& trial_id, const tune::Json& config,
                       const tune::Json& result) override {
    py::gil_scoped_acquire gil;
    callback_.get().attr("on_trial_result")(trial_id, to_python(config), to_python(result));
  }
  void on_trial_complete(const std::string& trial_id, const tune::Json& config,
                         const tune::Json& last_result) override {
    py::gil_scoped_acquire gil;
    callback_.get().attr("on_trial_complete")(trial_id, to_python(config), to_python(last_result));
  }
  void on_trial_error(const std::string& trial_id, const tune::Json& config,
                      const std::string& error) override {
    py::gil_scoped_acquire gil;
    callback_.get().attr("on_trial_error")(trial_id, to_python(config), error);
  }

 private:
  Held callback_;
};

class PythonStopper final : public tune::Stopper {
 public:
  explicit PythonStopper(py::object stopper) : stopper_(std::move(stopper)) {}
  bool should_stop_trial(const std::string& trial_id, const tune::Json& result) override {
    py::gil_scoped_acquire gil;
    return py::bool_(stopper_.get()(trial_id, to_python(result)));
  }
  bool stop_all() override {
    py::gil_scoped_acquire gil;
    if (!py::hasattr(stopper_.get(), "stop_all")) return false;
    return py::bool_(stopper_.get().attr("stop_all")());
  }
  std::string reason() const override { return "the Python stopper"; }

 private:
  Held stopper_;
};

// The save() and restore() of a searcher's or scheduler's adapter.
tune::Json save_adapter(const Held& adapter, const std::string& what) {
  py::gil_scoped_acquire gil;
  return to_json(adapter.get().attr("save")(), what);
}

void restore_adapter(const Held& adapter, const tune::Json& state) {
  py::gil_scoped_acquire gil;
  adapter.get().attr("restore")(to_python(state));
}

class PythonSearcher final : public tune::search::Searcher {
 public:
  explicit PythonSearcher(py::object adapter) : adapter_(std::move(adapter)) {}
  void set_search_properties(const std::string& metric, tune::Mode mode,
                             const tune::ParamSpace&) override {
    // The adapter holds the param_space as the user wrote it (with its
    // Python domains), which is what Ray's searchers are given.
    py::gil_scoped_acquire gil;
    adapter_.get().attr("set_search_properties")(metric, std::string(tune::to_string(mode)));
  }
  // Several objectives reach the Python searcher as Ray passes them: a list
  // of metrics and a list of modes; its on_trial_complete gets every metric
  // (and the constraints) in the result.
  void set_objectives(const std::vector<tune::Objective>& objectives,
                      const tune::ParamSpace&) override {
    py::gil_scoped_acquire gil;
    py::list metrics, modes;
    for (const tune::Objective& objective : objectives) {
      metrics.append(objective.metric);
      modes.append(std::string(tune::to_string(objective.mode)));
    }
    adapter_.get().attr("set_search_properties")(metrics, modes);
  }
  tune::search::Suggestion suggest(const std::string& trial_id) override {
    py::gil_scoped_acquire gil;
    const py::object out = adapter_.get().attr("suggest")(trial_id);
    if (out.is_none()) return tune::search::Suggestion::not_ready();
    if (py::isinstance<py::str>(out)) return tune::search::Suggestion::finished();
    return tune::search::Suggestion::of(to_json(out, "the searcher's suggestion"));
  }
  void on_trial_result(const std::string& trial_id, const tune::Json& result) override {
    py::gil_scoped_acquire gil;
    adapter_.get().attr("on_trial_result")(trial_id, to_python(result));
  }
  void on_trial_complete(const std::string& trial_id, const tune::Json* last_result,
                         bool error) override {
    py::gil_scoped_acquire gil;
    adapter_.get().attr("on_trial_complete")(
        trial_id, last_result ? to_python(*last_result) : py::none(), error);
  }
  tune::Json save() const override { return save_adapter(adapter_, "the searcher's saved state"); }
  void restore(const tune::Json& state) override { restore_adapter(adapter_, state); }

 private:
  Held adapter_;
};

py::tuple trial_to_python(const tune::schedulers::TrialView& t) {
  return py::make_tuple(t.trial_id, std::string(tune::to_string(t.status)), to_python(t.config),
                        t.last_result ? to_python(*t.last_result) : py::none(),
                        t.checkpoint_iteration);
}

class PythonScheduler final : public tune::schedulers::TrialScheduler {
 public:
  // Called with the GIL held (the spec is built in Python).
  explicit PythonScheduler(py::object adapter)
      : stops_trials_(adapter.attr("overrides")("take_trials_to_stop").cast<bool>()),
        adapter_(std::move(adapter)) {}
  void set_search_properties(const std::string& metric, tune::Mode mode) override {
    py::gil_scoped_acquire gil;
    adapter_.get().attr("set_search_properties")(metric, std::string(tune::to_string(mode)));
  }
  void on_trial_add(const tune::schedulers::TrialView& trial) override {
    call("on_trial_add", trial);
  }
  tune::Decision on_trial_result(const tune::schedulers::TrialView& trial,
                                 const tune::Json& result) override {
    py::gil_scoped_acquire gil;
    const auto decision = adapter_.get()
                              .attr("on_trial_result")(trial_to_python(trial), to_python(result))
                              .cast<std::string>();
    if (decision == "PAUSE") return tune::Decision::kPause;
    if (decision == "STOP") return tune::Decision::kStop;
    return tune::Decision::kContinue;
  }
  void on_trial_complete(const tune::schedulers::TrialView& trial,
                         const tune::Json* last_result) override {
    py::gil_scoped_acquire gil;
    adapter_.get().attr("on_trial_complete")(trial_to_python(trial),
                                             last_result ? to_python(*last_result) : py::none());
  }
  void on_trial_error(const tune::schedulers::TrialView& trial) override {
    call("on_trial_error", trial);
  }
  void on_trial_remove(const tune::schedulers::TrialView& trial) override {
    call("on_trial_remove", trial);
  }
  int choose_trial_to_run(const std::vector<tune::schedulers::TrialView>& candidates) override {
    py::gil_scoped_acquire gil;
    py::list trials;
    for (const auto& t : candidates) trials.append(trial_to_python(t));
    return adapter_.get().attr("choose_trial_to_run")(trials).cast<int>();
  }
  std::optional<tune::schedulers::Exploit> take_exploit(const std::string& trial_id) override {
    py::gil_scoped_acquire gil;
    py::object exploit = adapter_.get().attr("take_exploit")(trial_id);
    if (exploit.is_none()) return std::nullopt;
    auto pair = exploit.cast<py::tuple>();
    return tune::schedulers::Exploit{pair[0].cast<std::string>(),
                                     to_json(pair[1], "take_exploit's new config")};
  }
  // Every controller turn: Python is called only if the class has the hook.
  std::vector<std::string> take_trials_to_stop() override {
    if (!stops_trials_) return {};
    py::gil_scoped_acquire gil;
    return adapter_.get().attr("take_trials_to_stop")().cast<std::vector<std::string>>();
  }
  tune::Json save() const override { return save_adapter(adapter_, "the scheduler's saved state"); }
  void restore(const tune::Json& state) override { restore_adapter(adapter_, state); }
  std::string debug_string() const override {
    py::gil_scoped_acquire gil;
    return adapter_.get().attr("debug_string")().cast<std::string>();
  }

 private:
  void call(const char* hook, const tune::schedulers::TrialView& trial) {
    py::gil_scoped_acquire gil;
    adapter_.get().attr(hook)(trial_to_python(trial));
  }
  bool stops_trials_;
  Held adapter_;
};

}  // namespace

tune::Domain python_sample_from(py::object sample_from) {
  const std::string description = py::repr(sample_from).cast<std::string>();
  auto held = std::make_shared<Held>(std::move(sample_from));
  return tune::sample_from(
      [held, description](const tune::Json& config) {
        py::gil_scoped_acquire gil;
        return to_json(held->get().attr("_resolve")(to_python(config)), description);
      },
      description);
}

std::shared_ptr<tune::search::Searcher> python_searcher(py::object adapter) {
  return std::make_shared<PythonSearcher>(std::move(adapter));
}

std::shared_ptr<tune::schedulers::TrialScheduler> python_scheduler(py::object adapter) {
  return std::make_shared<PythonScheduler>(std::move(adapter));
}

std::shared_ptr<tune::schedulers::TrialScheduler> python_explored_pbt(const tune::Json& options,
                                                                      py::object explore) {
  auto held = std::make_shared<Held>(std::move(explore));
  return tune::schedulers::make_pbt_scheduler(options, [held](tune::Json config) {
    py::gil_scoped_acquire gil;
    return to_json(held->get()(to_python(config)), "custom_explore_fn");
  });
}

std::function<std::string(const std::string&, const tune::Json&)> python_trial_dirname(
    py::object namer) {
  auto held = std::make_shared<Held>(std::move(namer));
  return [held](const std::string& trial_id, const tune::Json& config) {
    py::gil_scoped_acquire gil;
    return py::str(held->get()(trial_id, to_python(config))).cast<std::string>();
  };
}

std::shared_ptr<tune::Callback> python_callback(py::object callback) {
  return std::make_shared<PythonCallback>(std::move(callback));
}

std::shared_ptr<tune::Stopper> python_stopper(py::object stopper) {
  return std::make_shared<PythonStopper>(std::move(stopper));
}

}  // namespace tunerun_py
