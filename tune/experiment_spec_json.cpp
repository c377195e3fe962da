#include "tune/experiment_spec_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "tune/gpus.h"

namespace tune {
namespace {

Json trainable_json(const TrainableSpec& t) {
  Json out = {{"name", t.name},
              {"num_workers", t.num_workers},
              {"cpus_per_worker", t.cpus_per_worker},
              {"gpus_per_worker", t.gpus_per_worker},
              {"threads_per_worker", t.threads()}};
  if (!t.library.empty()) out["library"] = t.library;
  if (!t.command.empty()) out["command"] = t.command;
  if (!t.working_dir.empty()) out["working_dir"] = t.working_dir.string();
  return out;
}

Json stop_json(const std::vector<StopCriterion>& criteria) {
  Json out = Json::object();
  for (const auto& c : criteria) {
    out[c.key] = c.comparison == StopCriterion::Comparison::kAtLeast
                     ? Json(c.threshold)
                     : Json{{"at_most", c.threshold}};
  }
  return out;
}

// TOML text for scalars and arrays. nlohmann's number and string forms are
// valid TOML (shortest exact floats such as 0.0105 and 1e-05; JSON string
// escapes); nulls and non-finite numbers have no TOML form and are left out.
bool has_toml_form(const Json& value) {
  return !value.is_null() && !(value.is_number_float() && !std::isfinite(value.get<double>()));
}

std::string toml_key(const std::string& key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? key : Json(key).dump();
}

std::string toml_value(const Json& value) {
  std::vector<std::string> parts;
  if (value.is_array()) {
    for (const auto& v : value) {
      if (has_toml_form(v)) parts.push_back(toml_value(v));
    }
    return fmt::format("[{}]", fmt::join(parts, ", "));
  }
  if (value.is_object()) {
    for (const auto& [k, v] : value.items()) {
      if (has_toml_form(v)) parts.push_back(toml_key(k) + " = " + toml_value(v));
    }
    return fmt::format("{{ {} }}", fmt::join(parts, ", "));
  }
  return value.dump();
}

// `table`'s plain keys, then each sub-table as a [path] section.
void write_table(const Json& table, const std::string& path, std::string& out) {
  for (const auto& [key, value] : table.items()) {
    if (!value.is_object() && has_toml_form(value)) {
      out += fmt::format("{} = {}\n", toml_key(key), toml_value(value));
    }
  }
  for (const auto& [key, value] : table.items()) {
    if (!value.is_object()) continue;
    const std::string sub = path.empty() ? toml_key(key) : path + "." + toml_key(key);
    // A table of tables needs no header of its own ([stop.loss] alone).
    const bool only_tables =
        !value.empty() &&
        std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_object(); });
    if (!only_tables) out += fmt::format("\n[{}]\n", sub);
    write_table(value, sub, out);
  }
}

}  // namespace

Json experiment_spec_to_json(const ExperimentSpec& spec) {
  Json search = spec.search_options.is_object() ? spec.search_options : Json::object();
  search["algorithm"] = spec.custom_searcher ? "custom" : spec.search_algorithm;
  Json scheduler = spec.scheduler_options.is_object() ? spec.scheduler_options : Json::object();
  scheduler["type"] = spec.custom_scheduler ? "custom" : spec.scheduler;
  const double cpus = spec.total_cpus > 0
                          ? spec.total_cpus
                          : static_cast<double>(std::thread::hardware_concurrency());
  Json cluster = {{"launcher", spec.cluster.launcher}};
  if (!spec.cluster.control_address.empty()) {
    cluster["control_address"] = spec.cluster.control_address;
  }
  if (!spec.cluster.control_interface.empty()) {
    cluster["control_interface"] = spec.cluster.control_interface;
  }
  return {{"name", spec.name},
          {"storage_path", spec.storage_path.string()},
          {"metric", spec.metric},
          {"mode", to_string(spec.mode)},
          {"num_samples", spec.num_samples},
          {"max_concurrent_trials", spec.max_concurrent_trials},
          {"seed", spec.seed},
          {"reuse_workers", spec.reuse_workers},
          {"prestart_workers", spec.prestart_workers},
          {"trainable", trainable_json(spec.trainable)},
          {"param_space", spec.param_space.describe()},
          {"search", search},
          {"scheduler", scheduler},
          {"stop", stop_json(spec.stop)},
          {"resources",
           {{"cpus", cpus},
            {"gpus",
             spec.total_gpus >= 0 ? spec.total_gpus : static_cast<int>(visible_gpus().size())}}},
          {"failure",
           {{"heartbeat_timeout_s", spec.heartbeat_timeout_s},
            {"max_failures", spec.max_failures},
            {"fail_fast", spec.fail_fast}}},
          {"checkpoint",
           {{"num_to_keep", spec.num_to_keep},
            {"checkpoint_score_attribute", spec.checkpoint_score_attribute},
            {"checkpoint_score_order", to_string(spec.checkpoint_score_order)}}},
          {"cluster", cluster}};
}

std::string json_to_toml(const Json& object) {
  if (!object.is_object()) throw Error("only a JSON object can be written as TOML");
  std::string out;
  write_table(object, "", out);
  return out;
}

}  // namespace tune
