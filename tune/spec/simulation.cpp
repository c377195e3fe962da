#include "tune/spec/simulation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "train/builtins/curve_families.h"
#include "train/builtins/curve_table.h"

namespace tune::sim {
namespace {

// What `space` holds at the dotted `key` ("model.width"); null: nothing.
const ParamSpace::Node* node_at(const ParamSpace& space, std::string_view key) {
  const auto dot = key.find('.');
  const std::string_view head = key.substr(0, dot);
  for (const auto& [name, node] : space.entries()) {
    if (name != head) continue;
    if (dot == std::string_view::npos) return &node;
    return node.nested() ? node_at(*node.nested(), key.substr(dot + 1)) : nullptr;
  }
  return nullptr;
}

}  // namespace

void check_curves(const ExperimentSpec& spec) {
  const SimulationSpec& sim = spec.simulation;
  const bool table = sim.curve == "table";
  if (table && sim.curve_table.empty()) {
    throw ConfigError::at_key("simulation.curve_table",
                              "curve = \"table\" needs curve_table = \"FILE.csv\"");
  }
  if (!table && !sim.curve_table.empty()) {
    throw ConfigError::at_key(
        "simulation.curve_table",
        fmt::format("a curve table is replayed with curve = \"table\", not \"{}\"", sim.curve));
  }
  std::optional<CurveTable> rows;
  std::vector<std::string> keys;
  if (table) {
    try {
      rows = CurveTable::load(sim.curve_table);
    } catch (const Error& e) {
      throw ConfigError::at_key("simulation.curve_table", e.what());
    }
    keys = rows->parameters();
  } else if (sim.curve != "learning_curve") {
    keys.assign(kFamilyParameters.begin(), kFamilyParameters.end());
  }
  if (spec.param_space.empty()) return;  // configs from a custom searcher: checked per trial
  for (size_t i = 0; i < keys.size(); ++i) {
    const ParamSpace::Node* node = node_at(spec.param_space, keys[i]);
    if (node == nullptr) {
      throw ConfigError::at_key(
          "param_space",
          fmt::format("curve \"{}\" reads '{}' from each config (it reads {}); the param_space "
                      "does not define it",
                      sim.curve, keys[i], fmt::join(keys, ", ")));
    }
    // A table's configs: every value a choice or a grid names has rows.
    const Domain* domain = node->domain();
    if (!rows || domain == nullptr || !domain->is_categorical()) continue;
    for (const Json& value : domain->values()) {
      if (!rows->column_holds(i, value)) {
        throw ConfigError::at_key("param_space." + keys[i],
                                  fmt::format("{} is not in column '{}' of the curve table {}",
                                              value.dump(), keys[i], sim.curve_table.string()));
      }
    }
  }
}

}  // namespace tune::sim
