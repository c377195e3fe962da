#include "bindings/plugins_py.h"

#include "bindings/json_py.h"

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

}  // namespace

std::shared_ptr<tune::Callback> python_callback(py::object callback) {
  return std::make_shared<PythonCallback>(std::move(callback));
}

std::shared_ptr<tune::Stopper> python_stopper(py::object stopper) {
  return std::make_shared<PythonStopper>(std::move(stopper));
}

}  // namespace tunerun_py
