// tune.stopper's classes as tune/builtin_stoppers.h's. Each names its C++ stopper by
// _native() -> (kind, options dict, child stoppers); see stoppers_py.h.
#include "bindings/stoppers_py.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bindings/json_py.h"
#include "bindings/plugins_py.h"
#include "tune/builtin_stoppers.h"

namespace tunerun_py {
namespace {

std::optional<tune::Mode> mode_of(const tune::Json& options, const std::string& kind) {
  const tune::Json mode = options.value("mode", tune::Json());
  if (mode.is_null()) return std::nullopt;
  const auto parsed = mode.is_string() ? tune::mode_from_string(mode.get<std::string>())
                                       : std::optional<tune::Mode>();
  if (!parsed) throw py::value_error(fmt::format("{}: mode must be \"min\" or \"max\"", kind));
  return parsed;
}

std::shared_ptr<tune::Stopper> native(const std::string& kind, const tune::Json& o,
                                      const py::list& children) {
  if (kind == "MaximumIterationStopper") {
    return std::make_shared<tune::MaximumIterationStopper>(o.at("max_iter").get<int64_t>());
  }
  if (kind == "TrialPlateauStopper") {
    tune::TrialPlateauOptions options;
    options.metric = o.at("metric").get<std::string>();
    options.std = o.at("std").get<double>();
    options.num_results = o.at("num_results").get<int64_t>();
    options.grace_period = o.at("grace_period").get<int64_t>();
    if (!o.at("metric_threshold").is_null()) {
      options.metric_threshold = o.at("metric_threshold").get<double>();
    }
    options.mode = mode_of(o, kind);
    return std::make_shared<tune::TrialPlateauStopper>(std::move(options));
  }
  if (kind == "ExperimentPlateauStopper") {
    tune::ExperimentPlateauOptions options;
    options.metric = o.at("metric").get<std::string>();
    options.std = o.at("std").get<double>();
    options.top = o.at("top").get<int64_t>();
    options.mode = mode_of(o, kind).value_or(tune::Mode::kMin);
    options.patience = o.at("patience").get<int64_t>();
    return std::make_shared<tune::ExperimentPlateauStopper>(std::move(options));
  }
  if (kind == "TimeoutStopper") {
    return std::make_shared<tune::TimeoutStopper>(
        std::chrono::duration<double>(o.at("timeout").get<double>()));
  }
  if (kind == "CombinedStopper") {
    std::vector<std::shared_ptr<tune::Stopper>> stoppers;
    for (py::handle child : children) stoppers.push_back(to_stopper(child));
    return std::make_shared<tune::CombinedStopper>(std::move(stoppers));
  }
  throw py::value_error(fmt::format("RunConfig.stop: unknown stopper {}", kind));
}

}  // namespace

std::shared_ptr<tune::Stopper> to_stopper(py::handle stopper) {
  if (!py::hasattr(stopper, "_native")) {
    return python_stopper(py::reinterpret_borrow<py::object>(stopper));
  }
  const py::tuple spec = stopper.attr("_native")();
  const std::string kind = spec[0].cast<std::string>();
  try {
    return native(kind, to_json(spec[1], kind), spec[2].cast<py::list>());
  } catch (const tune::ConfigError& e) {
    throw py::value_error(fmt::format("{}: {}", kind, e.message()));
  } catch (const tune::Json::exception& e) {
    throw py::value_error(fmt::format("{}: {}", kind, e.what()));
  }
}

}  // namespace tunerun_py
