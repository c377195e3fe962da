#include "bindings/worker.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cstdlib>

#include "bindings/json_py.h"
#include "core/errors.h"
#include "train/session.h"
#include "train/trainable.h"
#include "train/worker_env.h"
#include "train/worker_runtime.h"

namespace tunerun_py {
namespace {

// Set once when the module loads; lives as long as the interpreter.
py::handle g_stop_trial;

// The runtime sets these with setenv when a reused or prestarted rank takes
// on its trial; Python's os.environ is a copy made at start-up, and
// torch.distributed's env:// rendezvous reads MASTER_PORT from it.
void sync_trial_environment() {
  py::object environ = py::module_::import("os").attr("environ");
  for (const char* name : {train::kEnvTrialId, train::kEnvAttempt, "MASTER_PORT"}) {
    if (const char* value = std::getenv(name)) environ[py::str(name)] = py::str(value);
  }
}

// Calls a Python train function with the GIL held; a StopTrial raised by
// report() becomes the runtime's own stop, anything else a TrialError whose
// message is the Python exception's type and text (the traceback went to the
// rank's log before, from tunerun/_worker.py).
train::TrainFunc wrap(py::function func) {
  // Never freed: the registry outlives the interpreter, and dropping a Python
  // reference after Py_Finalize (in a static destructor) would crash the exit.
  auto* leaked = new py::function(std::move(func));
  return [leaked](const tune::Config& config) {
    py::gil_scoped_acquire gil;
    try {
      sync_trial_environment();
      (*leaked)(to_python(config.json()));
    } catch (py::error_already_set& e) {
      if (e.matches(g_stop_trial)) throw train::detail::StopTrial{};
      const std::string type = e.type().attr("__name__").cast<std::string>();
      const std::string text = py::str(e.value()).cast<std::string>();
      throw tune::TrialError(text.empty() ? type : type + ": " + text);
    }
  };
}

}  // namespace

void add_worker_functions(py::module_& m) {
  // Leaked on purpose, as the functions in wrap(): no destructor after Py_Finalize.
  g_stop_trial = *new py::exception<train::detail::StopTrial>(m, "StopTrial", PyExc_BaseException);

  m.def("is_worker", &tune::is_worker,
        "True in a process a tunerun controller started as a trial's rank.");
  m.def(
      "register_trainable",
      [](const std::string& name, py::function func) {
        train::register_trainable(name, wrap(std::move(func)));
      },
      py::arg("name"), py::arg("func"));
  m.def("run_worker", &train::run_worker, py::call_guard<py::gil_scoped_release>(),
        "Runs this rank's trials (HELLO, START, the function, DONE/ERROR); returns the exit code.");
  m.def(
      "report",
      [](py::handle metrics, std::optional<std::string> checkpoint) {
        tune::Json json = to_json(metrics, "metrics");
        if (!json.is_object()) throw py::value_error("train.report() needs a dict of metrics");
        std::optional<train::Checkpoint> ckpt;
        if (checkpoint) ckpt = train::Checkpoint::from_directory(*checkpoint);
        try {
          py::gil_scoped_release release;
          train::report(json, ckpt);
        } catch (const train::detail::StopTrial&) {
          PyErr_SetString(g_stop_trial.ptr(), "the controller stopped this trial");
          throw py::error_already_set();
        }
      },
      py::arg("metrics"), py::arg("checkpoint") = py::none());
  m.def("get_context", [] {
    const train::Context& c = train::get_context();
    py::dict out;
    out["world_rank"] = c.world_rank;
    out["world_size"] = c.world_size;
    out["local_rank"] = c.local_rank;
    out["local_world_size"] = c.local_world_size;
    out["node_rank"] = c.node_rank;
    out["trial_id"] = c.trial_id;
    out["trial_name"] = c.trial_name;
    out["trial_dir"] = c.trial_dir;
    out["experiment"] = c.experiment;
    out["attempt"] = c.attempt;
    return out;
  });
  m.def("get_checkpoint", []() -> std::optional<std::string> {
    auto ckpt = train::get_checkpoint();
    if (!ckpt) return std::nullopt;
    return ckpt->path().string();
  });
  m.def("make_checkpoint_dir", [] { return train::make_checkpoint_dir().string(); });
  m.def("should_checkpoint", [] {
    try {
      py::gil_scoped_release release;
      return train::should_checkpoint();
    } catch (const train::detail::StopTrial&) {
      PyErr_SetString(g_stop_trial.ptr(), "the controller stopped this trial");
      throw py::error_already_set();
    }
  });
}

}  // namespace tunerun_py
