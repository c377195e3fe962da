#include "tune/spec/validation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "core/errors.h"
#include "schedulers/factory.h"
#include "schedulers/trial_scheduler.h"
#include "search/factory.h"
#include "train/external_command.h"
#include "tune/spec/fields.h"
#include "tune/spec/hostfile.h"
#include "tune/spec/simulation.h"

namespace tune {
namespace {

void check_field(const SpecField& field, const ExperimentSpec& spec, const std::string& key) {
  const Json value = field_value(field, spec);
  if (field.valid == nullptr || field.valid(value)) return;
  const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  throw ConfigError::at_key(key, fmt::format(fmt::runtime(field.rule), text));
}

// The plug-ins' kinds, whether named or given as objects.
std::string searcher_kind(const ExperimentSpec& spec) {
  return spec.custom_searcher ? spec.custom_searcher->kind() : spec.search_algorithm;
}
std::string scheduler_kind(const ExperimentSpec& spec) {
  return spec.custom_scheduler ? spec.custom_scheduler->kind() : spec.scheduler;
}

// A command placeholder that names no key of the param space would fail
// every trial: refuse it before anything runs.
void check_command(const ExperimentSpec& spec) {
  if (spec.trainable.command.empty()) return;
  std::vector<std::string> keys;
  try {
    keys = train::placeholder_keys(spec.trainable.command);
  } catch (const ConfigError& e) {
    throw ConfigError::at_key("trainable.command", e.message());
  }
  const Config space(spec.param_space.describe());
  for (const auto& key : keys) {
    if (space.contains(key)) continue;
    std::vector<std::string> names;
    for (const auto& [name, value] : space.json().items()) names.push_back(name);
    throw ConfigError::at_key(
        "trainable.command",
        fmt::format("placeholder {{{}}} names no key of [param_space] (keys: {}); "
                    "write {{{{ and }}}} for literal braces",
                    key, fmt::join(names, ", ")));
  }
}

// Several objectives: as many modes as metrics (or one for all), each
// metric named once.
void check_objectives(const ExperimentSpec& spec) {
  if (spec.modes.size() > 1 && spec.modes.size() != std::max<size_t>(spec.metrics.size(), 1)) {
    throw ConfigError::at_key(
        "mode", fmt::format("{} modes for {} metric(s); give one mode for all, or one per "
                            "metric",
                            spec.modes.size(), std::max<size_t>(spec.metrics.size(), 1)));
  }
  std::set<std::string> seen;
  for (const std::string& metric : spec.metrics) {
    if (metric.empty() || !seen.insert(metric).second) {
      throw ConfigError::at_key(
          "metric", fmt::format("each objective needs its own metric name; '{}' is {}", metric,
                                metric.empty() ? "empty" : "named twice"));
    }
  }
}

// A named plug-in's options, checked by building it as the controller will.
// An error names the option under its table ("search.n_startup_trials"),
// or the experiment's metric.
void check_plugins(const ExperimentSpec& spec) {
  auto under = [](const ConfigError& e, const std::string& table) {
    const std::string key = e.key() == "metric" ? "metric"
                            : e.key().empty()   ? table
                                                : table + "." + e.key();
    return ConfigError::at_key(key, e.message());
  };
  const std::vector<Objective> objectives = spec.objectives();
  if (!spec.custom_searcher) {
    try {
      auto searcher = search::make_searcher(spec.search_algorithm, spec.search_options,
                                            {spec.num_samples, spec.seed});
      if (objectives.size() > 1) {
        searcher->set_objectives(objectives, spec.param_space);
      } else {
        searcher->set_search_properties(spec.metric, spec.mode, spec.param_space);
      }
    } catch (const ConfigError& e) {
      throw under(e, "search");
    }
  }
  if (!spec.custom_scheduler) {
    try {
      auto scheduler = schedulers::make_scheduler(spec.scheduler, spec.scheduler_options);
      if (objectives.size() > 1) {
        scheduler->set_objectives(objectives);
      } else {
        scheduler->set_search_properties(spec.metric, spec.mode);
      }
    } catch (const ConfigError& e) {
      throw under(e, "scheduler");
    }
  }
}

// A model-based searcher samples every value of a config, a grid_search's
// too: a grid of N cells would not run N trials, as `validate` counts them.
void check_grid(const ExperimentSpec& spec) {
  static const std::set<std::string> kModelBased = {"tpe", "motpe",    "nsga2",
                                                    "gp",  "bayesopt", "bohb"};
  const std::string kind = searcher_kind(spec);
  const size_t cells = spec.param_space.num_grid_cells();
  if (cells < 2 || !kModelBased.contains(kind)) return;
  throw ConfigError::at_key(
      "search.algorithm",
      fmt::format("\"{}\" is a model-based searcher: it samples each trial's config and "
                  "cannot run [param_space]'s grid_search ({} cells). Write the grid's values "
                  "as {{ choice = [...] }} for \"{}\" to choose from, or use search algorithm "
                  "\"random\", which runs every cell (num_samples times)",
                  kind, cells, kind));
}

}  // namespace

void check_storage_path(const ExperimentSpec& spec) {
  namespace fs = std::filesystem;
  auto refuse = [](const fs::path& path, const std::string& what) {
    return ConfigError::at_key("storage_path", fmt::format("{} {}", path.string(), what));
  };
  std::error_code error;
  for (const fs::path& path : {spec.storage_path, spec.experiment_dir()}) {
    // The nearest folder that exists: the one a new folder goes in.
    fs::path existing = path.empty() ? fs::path(".") : path;
    while (!fs::exists(existing, error) && existing.has_parent_path() &&
           existing.parent_path() != existing) {
      existing = existing.parent_path();
    }
    if (!fs::exists(existing, error)) existing = ".";
    if (!fs::is_directory(existing, error)) {
      throw refuse(existing, existing == path ? "is a file, not a folder"
                                              : fmt::format("is a file, so {} cannot be created "
                                                            "under it",
                                                            path.string()));
    }
    if (access(existing.c_str(), W_OK | X_OK) != 0) {
      throw refuse(existing, fmt::format("is not writable ({}){}", std::strerror(errno),
                                         existing == path ? ""
                                                          : fmt::format(", so {} cannot be created",
                                                                        path.string())));
    }
  }
}

void validate_resources(const Resources& resources, const std::string& prefix) {
  ExperimentSpec spec;
  static_cast<Resources&>(spec.trainable) = resources;
  for (const SpecField& field : spec_fields()) {
    if (field.section() == "trainable") {
      check_field(field, spec, fmt::format("{}.{}", prefix, field.name()));
    }
  }
}

void finish_spec(ExperimentSpec& spec) {
  if (const char* off = std::getenv("TUNE_DISABLE_STRICT_METRIC_CHECKING")) {
    spec.strict_metric_checking = std::string_view(off) != "1";
  }
  spec.heartbeat_period_s = std::min(spec.heartbeat_period_s, spec.heartbeat_timeout_s / 4);
  // Ray's HyperBandForBOHB: brackets that fill before they halve.
  if (searcher_kind(spec) == "bohb" && !spec.custom_scheduler && spec.scheduler == "hyperband" &&
      !spec.scheduler_options.contains("for_bohb")) {
    spec.scheduler_options["for_bohb"] = true;
  }

  for (const SpecField& field : spec_fields()) check_field(field, spec, std::string(field.key));
  check_objectives(spec);
  if (spec.trainable.name.empty() && spec.trainable.command.empty()) {
    throw ConfigError::at_key("trainable", "the trainable has no name");
  }
  if (!spec.cluster.control_address.empty() && !spec.cluster.control_interface.empty()) {
    throw ConfigError::at_key("cluster.control_interface",
                              "give control_address or control_interface, not both");
  }
  check_command(spec);
  check_ssh_cluster(spec);
  check_plugins(spec);
  check_grid(spec);
  // The command line's launcher "sim" checks them too (tune/cli/run_command.cpp).
  if (spec.cluster.launcher == "sim") sim::check_curves(spec);
  // BOHB's model learns from the budgets HyperBand's brackets produce; under
  // another scheduler it is a TPE that sees few full-length results.
  if (searcher_kind(spec) == "bohb" && scheduler_kind(spec) != "hyperband") {
    throw ConfigError::at_key(
        "search.algorithm",
        fmt::format("\"bohb\" needs the \"hyperband\" scheduler (BOHB pairs its "
                    "model with HyperBand's brackets), got \"{}\"",
                    scheduler_kind(spec)));
  }
}

}  // namespace tune
