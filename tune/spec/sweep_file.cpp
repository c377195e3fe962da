#include "tune/spec/sweep_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "search/domain_spec.h"
#include "train/plugin.h"
#include "train/trainable.h"
#include "tune/spec/fields.h"
#include "tune/spec/validation.h"
#include "tune/system/executable.h"

namespace tune {
namespace {

int64_t line_of(const toml::node& node) { return node.source().begin.line; }

// toml++ keeps a table's keys sorted; the file's order is what a user
// wrote, and what grid expansion and sampling follow.
std::vector<std::pair<std::string, const toml::node*>> in_file_order(const toml::table& table) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  for (const auto& [key, node] : table) entries.emplace_back(std::string(key.str()), &node);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.second->source().begin;
    const auto& pb = b.second->source().begin;
    return std::tie(pa.line, pa.column) < std::tie(pb.line, pb.column);
  });
  return entries;
}

Json to_json(const toml::node& node) {
  if (auto* t = node.as_table()) {
    Json object = Json::object();
    for (const auto& [key, value] : *t) object[std::string(key.str())] = to_json(value);
    return object;
  }
  if (auto* a = node.as_array()) {
    Json array = Json::array();
    for (const auto& value : *a) array.push_back(to_json(value));
    return array;
  }
  if (auto v = node.value_exact<int64_t>()) return *v;
  if (auto v = node.value_exact<double>()) return *v;
  if (auto v = node.value_exact<bool>()) return *v;
  if (auto v = node.value_exact<std::string>()) return *v;
  std::ostringstream text;  // dates and times: kept as their TOML text
  if (auto* d = node.as_date()) text << *d;
  if (auto* t = node.as_time()) text << *t;
  if (auto* dt = node.as_date_time()) text << *dt;
  return text.str();
}

// A value for a spec field: a TOML integer, float, bool or string as JSON,
// or an array of those (metric and mode take lists, num_workers = [min,
// max]); anything else as null, which every field's type refuses.
Json scalar(const toml::node& node) {
  if (auto v = node.value_exact<int64_t>()) return *v;
  if (auto v = node.value_exact<double>()) return *v;
  if (auto v = node.value_exact<bool>()) return *v;
  if (auto v = node.value_exact<std::string>()) return *v;
  if (const toml::array* a = node.as_array()) {
    Json out = Json::array();
    for (const toml::node& element : *a) out.push_back(scalar(element));
    return out;
  }
  return nullptr;
}

// Reads one TOML table, remembering which keys were used so that finish()
// can reject the rest as unknown. Every error names file, line and key.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, const std::string& file)
      : table_(table), prefix_(std::move(prefix)), file_(file) {}

  std::string key_path(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  }

  ConfigError error(std::string_view key, const std::string& message) const {
    const toml::node* node = table_.get(key);
    return ConfigError(message, file_, node ? line_of(*node) : line_of(table_), key_path(key));
  }

  const toml::node* node(std::string_view key) {
    used_.insert(std::string(key));
    return table_.get(key);
  }

  std::optional<std::string> string(std::string_view key) {
    const toml::node* n = node(key);
    if (n == nullptr) return std::nullopt;
    if (auto v = n->value_exact<std::string>()) return *v;
    throw error(key, "expected a string");
  }

  // The spec table's rows of this table (tune/spec/fields.h), into `spec`.
  void read_fields(ExperimentSpec& spec) {
    for (const SpecField& field : spec_fields()) {
      if (field.section() != prefix_) continue;
      const toml::node* n = node(field.name());
      if (n == nullptr) continue;
      try {
        set_field(field, spec, scalar(*n));
      } catch (const ConfigError& e) {
        throw error(field.name(), e.message());
      }
    }
  }

  const toml::table* table(std::string_view key) {
    const toml::node* n = node(key);
    if (n == nullptr) return nullptr;
    if (!n->is_table()) throw error(key, "expected a table");
    return n->as_table();
  }

  // Every key not read yet, as a JSON object (options passed to a plug-in).
  Json rest() {
    Json options = Json::object();
    for (const auto& [key, value] : table_) {
      if (!used_.contains(std::string(key.str()))) {
        options[std::string(key.str())] = to_json(value);
        used_.insert(std::string(key.str()));
      }
    }
    return options;
  }

  // Refuses every key not read: neither a row of this table nor one of `more`.
  void finish(const std::vector<std::string_view>& more = {}) const {
    std::vector<std::string_view> known;
    for (const SpecField& field : spec_fields()) {
      if (field.section() == prefix_) known.push_back(field.name());
    }
    known.insert(known.end(), more.begin(), more.end());
    for (const auto& [key, value] : table_) {
      if (!used_.contains(std::string(key.str()))) {
        throw error(key.str(), fmt::format("unknown key; known here: {}", fmt::join(known, ", ")));
      }
    }
  }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& file_;
  std::set<std::string> used_;
};

// `{ uniform = [lo, hi] }` and its kin (search/domain_spec.h).
Domain parse_domain(const toml::table& inline_table, const std::string& key_path,
                    const std::string& file) {
  try {
    return domain_from_spec(to_json(inline_table));
  } catch (const ConfigError& e) {
    throw ConfigError(e.message() + " (a [section] is a nested space; an inline table a domain)",
                      file, line_of(inline_table), key_path);
  }
}

ParamSpace parse_space(const toml::table& table, const std::string& prefix,
                       const std::string& file) {
  ParamSpace space;
  for (const auto& [name, node] : in_file_order(table)) {
    const std::string path = prefix + "." + name;
    if (const toml::table* t = node->as_table()) {
      space.set(name, t->is_inline() ? ParamSpace::Node(parse_domain(*t, path, file))
                                     : ParamSpace::Node(parse_space(*t, path, file)));
    } else {
      space.set(name, to_json(*node));
    }
  }
  return space;
}

std::vector<StopCriterion> parse_stop(const toml::table& table, const std::string& file) {
  std::vector<StopCriterion> criteria;
  for (const auto& [key, node_ptr] : in_file_order(table)) {
    const std::string name = key;  // clang 14 cannot capture a structured binding
    const toml::node& node = *node_ptr;
    auto fail = [&](const std::string& message) {
      return ConfigError(message, file, line_of(node), "stop." + name);
    };
    if (auto v = node.value<double>(); v && node.is_number()) {
      criteria.push_back({name, *v, StopCriterion::Comparison::kAtLeast});
    } else if (const toml::table* t = node.as_table(); t && t->size() == 1) {
      const auto entry = t->begin();  // owns the pair it yields
      const auto& [op, bound] = *entry;
      auto value = bound.value<double>();
      if (!value || !bound.is_number()) throw fail("the bound must be a number");
      if (op.str() == "at_least") {
        criteria.push_back({name, *value, StopCriterion::Comparison::kAtLeast});
      } else if (op.str() == "at_most") {
        criteria.push_back({name, *value, StopCriterion::Comparison::kAtMost});
      } else {
        throw fail(fmt::format("unknown comparison '{}'; use at_least or at_most", op.str()));
      }
    } else {
      throw fail("expected a number (stop once >= it) or { at_most = x } / { at_least = x }");
    }
  }
  return criteria;
}

// `builtin = NAME`, or `name = NAME` with `library = PATH` (relative to the
// sweep file). Built-ins that need libtorch live in a plugin library next to
// the executable.
void read_trainable(TableReader& top, const std::string& file, ExperimentSpec& spec) {
  const toml::table* table = top.table("trainable");
  if (table == nullptr) throw top.error("trainable", "missing [trainable] table");
  TableReader r(*table, "trainable", file);
  auto builtin = r.string("builtin");
  auto name = r.string("name");
  auto library = r.string("library");
  const toml::node* command = r.node("command");
  if ((builtin ? 1 : 0) + (library ? 1 : 0) + (command ? 1 : 0) > 1) {
    throw r.error(builtin ? "builtin" : "library",
                  "use one of builtin = NAME, name = NAME with library = PATH, or command = [...]");
  }
  if (command) {
    const toml::array* argv = command->as_array();
    if (argv == nullptr || argv->empty()) {
      throw r.error("command",
                    "expected a non-empty array of strings, e.g. [\"python3\", "
                    "\"train.py\", \"--lr\", \"{lr}\"]");
    }
    for (const auto& arg : *argv) {
      auto text = arg.value_exact<std::string>();
      if (!text) throw r.error("command", "every element must be a string");
      spec.trainable.command.push_back(*text);
    }
    spec.trainable.name = name.value_or("command");
    // The command runs where the sweep file is, so `python3 train.py` finds it.
    spec.trainable.working_dir = std::filesystem::absolute(file).parent_path();
  } else if (builtin) {
    spec.trainable.name = *builtin;
    if (auto plugin = train::builtin_plugin_library(*builtin)) {
      std::vector<std::string> looked;
      for (const auto& path : train::builtin_plugin_candidates(*plugin, self_executable())) {
        if (std::filesystem::exists(path)) {
          spec.trainable.library = path.string();
          break;
        }
        looked.push_back(path.string());
      }
      if (spec.trainable.library.empty()) {
        throw r.error("builtin", fmt::format("'{}' needs {}, which this build lacks (looked in "
                                             "{}; scripts/build.sh builds it, with libtorch: "
                                             "TUNERUN_WITH_TORCH=1)",
                                             *builtin, *plugin, fmt::join(looked, ", ")));
      }
    } else if (train::find_trainable(*builtin) == nullptr) {
      throw r.error("builtin", fmt::format("no trainable named '{}'; known: {}", *builtin,
                                           fmt::join(train::trainable_names(), ", ")));
    }
  } else if (library) {
    if (!name) throw r.error("library", "a library trainable also needs name = NAME");
    auto path = std::filesystem::path(*library);
    if (path.is_relative())
      path = std::filesystem::absolute(std::filesystem::path(file).parent_path() / path);
    if (!std::filesystem::exists(path)) {
      throw r.error("library", fmt::format("no library at {}", path.string()));
    }
    spec.trainable.name = *name;
    spec.trainable.library = path.string();
  } else {
    throw r.error(name ? "name" : "builtin",
                  "missing: name the trainable to run, e.g. builtin = \"quadratic\"");
  }
  r.read_fields(spec);
  r.finish({"builtin", "name", "library", "command"});
}

// The file and line of a rule's error (tune/spec/validation.h): its key's
// value, else the nearest table on its path that the file has.
ConfigError located(const ConfigError& e, const toml::table& root, const std::string& file) {
  std::string path = e.key();
  while (!path.empty() && !root.at_path(path)) {
    const auto dot = path.rfind('.');
    path = dot == std::string::npos ? "" : path.substr(0, dot);
  }
  const toml::node* node = path.empty() ? &root : root.at_path(path).node();
  return ConfigError(e.message(), file, line_of(*node), e.key());
}

}  // namespace

ExperimentSpec parse_sweep(std::string_view text, const std::string& source_name) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(std::string(e.description()), source_name,
                      static_cast<int64_t>(e.source().begin.line));
  }
  ExperimentSpec spec;
  spec.source = to_json(root);
  spec.sweep_text = std::string(text);
  spec.sweep_file = source_name;
  TableReader top(root, "", source_name);
  top.read_fields(spec);
  if (!root.contains("name")) spec.name = std::filesystem::path(source_name).stem().string();
  read_trainable(top, source_name, spec);
  if (const toml::table* space = top.table("param_space")) {
    spec.param_space = parse_space(*space, "param_space", source_name);
  }
  if (const toml::table* stop = top.table("stop")) spec.stop = parse_stop(*stop, source_name);
  // The plug-ins' tables: every key but the row (algorithm, type) is an
  // option, which the plug-in's factory checks (finish_spec).
  for (auto [name, options] : {std::pair{"search", &spec.search_options},
                               std::pair{"scheduler", &spec.scheduler_options}}) {
    if (const toml::table* table = top.table(name)) {
      TableReader r(*table, name, source_name);
      r.read_fields(spec);
      *options = r.rest();
    }
  }
  // The other tables hold rows only.
  std::vector<std::string_view> tables = {"trainable", "param_space", "search", "scheduler",
                                          "stop"};
  for (std::string_view name : spec_sections()) {
    if (name.empty() || std::find(tables.begin(), tables.end(), name) != tables.end()) continue;
    tables.push_back(name);
    if (const toml::table* table = top.table(name)) {
      TableReader r(*table, std::string(name), source_name);
      r.read_fields(spec);
      r.finish();
    }
  }
  top.finish(tables);
  // A curve table, as a library, is relative to the sweep file; so are an SSH hostfile and config.
  for (auto* path :
       {&spec.simulation.curve_table, &spec.cluster.hostfile, &spec.cluster.ssh_config}) {
    if (!path->empty() && path->is_relative()) {
      *path = std::filesystem::absolute(std::filesystem::path(source_name).parent_path() / *path);
    }
  }
  try {
    finish_spec(spec);
  } catch (const ConfigError& e) {
    throw located(e, root, source_name);
  }
  return spec;
}

ExperimentSpec load_sweep_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read the sweep file", path.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_sweep(text.str(), path.string());
}

}  // namespace tune
