#include "tune/spec/json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "core/errors.h"
#include "tune/spec/fields.h"
#include "tune/system/gpus.h"

namespace tune {
namespace {

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

// "failure.max_failures" as the JSON pointer /failure/max_failures.
Json::json_pointer pointer(std::string_view key) {
  std::string path = "/" + std::string(key);
  std::replace(path.begin(), path.end(), '.', '/');
  return Json::json_pointer(path);
}

// object[key], or null when `object` is not an object or lacks it.
const Json& member(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(std::string(key));
  return it == object.end() ? kNull : *it;
}

// A plug-in's options: the keys of `table` that no row names.
Json options(const Json& json, std::string_view table) {
  Json out = Json::object();
  for (const auto& [key, value] : member(json, table).items()) {
    const bool row =
        std::any_of(spec_fields().begin(), spec_fields().end(),
                    [&](const SpecField& f) { return f.section() == table && f.name() == key; });
    if (!row) out[key] = value;
  }
  return out;
}

}  // namespace

Json experiment_spec_to_json(const ExperimentSpec& spec) {
  Json out = Json::object();
  for (const SpecField& field : spec_fields()) out[pointer(field.key)] = field_value(field, spec);
  // What 0 and -1 mean on this machine, as the controller will take them.
  if (spec.total_cpus <= 0) {
    out["resources"]["cpus"] = static_cast<double>(std::thread::hardware_concurrency());
  }
  if (spec.total_gpus < 0) out["resources"]["gpus"] = static_cast<int>(visible_gpus().size());
  out["trainable"]["threads_per_worker"] = spec.trainable.threads();

  Json& trainable = out["trainable"];
  trainable["name"] = spec.trainable.name;
  if (!spec.trainable.library.empty()) trainable["library"] = spec.trainable.library;
  if (!spec.trainable.command.empty()) trainable["command"] = spec.trainable.command;
  if (!spec.trainable.working_dir.empty()) {
    trainable["working_dir"] = spec.trainable.working_dir.string();
  }
  out["param_space"] = spec.param_space.describe();
  out["stop"] = stop_json(spec.stop);
  if (spec.search_options.is_object()) out["search"].update(spec.search_options);
  // A searcher object: its kind ("tpe", "bohb"...; "custom" for one of the
  // user's own), so a reader of the stored spec knows what searched.
  if (spec.custom_searcher) {
    out["search"]["algorithm"] = spec.custom_searcher->kind();
    out["search"]["object"] = true;
  }
  if (spec.scheduler_options.is_object()) out["scheduler"].update(spec.scheduler_options);
  if (spec.custom_scheduler) out["scheduler"]["type"] = "custom";
  return out;
}

void read_spec_json(ExperimentSpec& spec, const Json& json) {
  if (!json.is_object()) throw ConfigError("expected an object");
  for (const SpecField& field : spec_fields()) {
    const Json& section = field.section().empty() ? json : member(json, field.section());
    if (section.is_null()) continue;
    if (!section.is_object()) {
      throw ConfigError::at_key(std::string(field.section()), "expected an object");
    }
    const Json& value = member(section, field.name());
    if (!value.is_null()) set_field(field, spec, value);
  }
  const Json& name = member(member(json, "trainable"), "name");
  if (!name.is_null()) {
    if (!name.is_string()) throw ConfigError::at_key("trainable.name", "expected a string");
    spec.trainable.name = name.get<std::string>();
  }
  spec.search_options = options(json, "search");
  spec.scheduler_options = options(json, "scheduler");
}

std::string json_to_toml(const Json& object) {
  if (!object.is_object()) throw Error("only a JSON object can be written as TOML");
  std::string out;
  write_table(object, "", out);
  return out;
}

}  // namespace tune
