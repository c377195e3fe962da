#include "tune/sweep_file.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "schedulers/trial_scheduler.h"
#include "search/domain_spec.h"
#include "search/factory.h"
#include "train/external_command.h"
#include "train/plugin.h"
#include "train/trainable.h"
#include "tune/process.h"
#include "tune/spec_validation.h"

namespace tune {
namespace {

int64_t line_of(const toml::node& node) { return node.source().begin.line; }

// An integer from the file as an int; values beyond int's range stay out of
// every valid range, so validate_spec still refuses them.
int clamp_int(int64_t v) {
  return static_cast<int>(
      std::clamp<int64_t>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

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

  template <class T>
  std::optional<T> get(std::string_view key) {
    const toml::node* n = node(key);
    if (n == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<T, double>) {
      if (auto v = n->value<double>(); v && n->is_number()) return *v;
      throw error(key, "expected a number");
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (auto v = n->value_exact<int64_t>()) return *v;
      throw error(key, "expected an integer");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (auto v = n->value_exact<bool>()) return *v;
      throw error(key, "expected true or false");
    } else {
      if (auto v = n->value_exact<std::string>()) return *v;
      throw error(key, "expected a string");
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

  void finish(const std::vector<std::string_view>& known) const {
    for (const auto& [key, value] : table_) {
      if (!used_.contains(std::string(key.str()))) {
        throw error(key.str(), fmt::format("unknown key; known here: {}", fmt::join(known, ", ")));
      }
    }
  }

  // Re-throws a plug-in's ConfigError, adding the file and the line of the
  // option it names.
  [[noreturn]] void rethrow(const ConfigError& e) const { throw error(e.key(), e.message()); }

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

bool valid_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

// `builtin = NAME`, or `name = NAME` with `library = PATH` (relative to the
// sweep file). Built-ins that need libtorch live in a plugin library next to
// the executable.
void read_trainable(TableReader& top, const std::string& file, ExperimentSpec& spec) {
  const toml::table* table = top.table("trainable");
  if (table == nullptr) throw top.error("trainable", "missing [trainable] table");
  TableReader r(*table, "trainable", file);
  auto builtin = r.get<std::string>("builtin");
  auto name = r.get<std::string>("name");
  auto library = r.get<std::string>("library");
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
  // Ranges are validate_spec's, as for the C++ API.
  if (auto n = r.get<int64_t>("num_workers")) spec.trainable.num_workers = clamp_int(*n);
  if (auto c = r.get<double>("cpus_per_worker")) spec.trainable.cpus_per_worker = *c;
  if (auto g = r.get<int64_t>("gpus_per_worker")) spec.trainable.gpus_per_worker = clamp_int(*g);
  if (auto t = r.get<int64_t>("threads_per_worker")) {
    spec.trainable.threads_per_worker = clamp_int(*t);
  }
  r.finish({"builtin", "name", "library", "command", "num_workers", "cpus_per_worker",
            "gpus_per_worker", "threads_per_worker"});
}

// A command placeholder that names no key of the param space would fail
// every trial: reject it before anything runs.
void check_command_placeholders(const ExperimentSpec& spec, TableReader& top) {
  if (spec.trainable.command.empty()) return;
  const toml::table* trainable = top.table("trainable");
  TableReader r(*trainable, "trainable", spec.sweep_file);
  std::vector<std::string> keys;
  try {
    keys = train::placeholder_keys(spec.trainable.command);
  } catch (const ConfigError& e) {
    throw r.error("command", e.message());
  }
  const Config space(spec.param_space.describe());
  for (const auto& key : keys) {
    if (space.contains(key)) continue;
    std::vector<std::string> names;
    for (const auto& [name, value] : space.json().items()) names.push_back(name);
    throw r.error("command", fmt::format("placeholder {{{}}} names no key of [param_space] "
                                         "(keys: {}); write {{{{ and }}}} for literal braces",
                                         key, fmt::join(names, ", ")));
  }
}

ClusterSpec read_cluster(TableReader r) {
  ClusterSpec cluster;
  if (auto launcher = r.get<std::string>("launcher")) {
    if (*launcher != "local" && *launcher != "slurm" && *launcher != "auto") {
      throw r.error("launcher", fmt::format("'{}' is not a launcher; use \"local\", \"slurm\" "
                                            "or \"auto\" (slurm inside an allocation)",
                                            *launcher));
    }
    cluster.launcher = *launcher;
  }
  if (auto address = r.get<std::string>("control_address")) {
    in_addr parsed{};
    if (inet_pton(AF_INET, address->c_str(), &parsed) != 1) {
      throw r.error("control_address",
                    fmt::format("'{}' is not an IPv4 address (e.g. \"10.1.2.3\")", *address));
    }
    cluster.control_address = *address;
  }
  if (auto interface = r.get<std::string>("control_interface")) {
    if (!cluster.control_address.empty()) {
      throw r.error("control_interface", "give control_address or control_interface, not both");
    }
    if (interface->empty()) throw r.error("control_interface", "is empty");
    cluster.control_interface = *interface;
  }
  r.finish({"launcher", "control_address", "control_interface"});
  return cluster;
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

  const std::string stem = std::filesystem::path(source_name).stem().string();
  spec.name = top.get<std::string>("name").value_or(stem);
  if (!valid_name(spec.name)) {
    throw top.error("name", fmt::format("'{}' is not a valid experiment name (letters, digits, "
                                        "'_', '-', '.')",
                                        spec.name));
  }
  if (auto p = top.get<std::string>("storage_path")) spec.storage_path = *p;
  spec.metric = top.get<std::string>("metric").value_or("");
  if (auto m = top.get<std::string>("mode")) {
    auto mode = mode_from_string(*m);
    if (!mode) throw top.error("mode", fmt::format("'{}' is not a mode; use min or max", *m));
    spec.mode = *mode;
  }
  if (auto n = top.get<int64_t>("num_samples")) spec.num_samples = *n;
  if (auto n = top.get<int64_t>("max_concurrent_trials")) {
    spec.max_concurrent_trials = clamp_int(*n);
  }
  if (auto s = top.get<int64_t>("seed")) spec.seed = static_cast<uint64_t>(*s);
  if (auto reuse = top.get<bool>("reuse_workers")) spec.reuse_workers = *reuse;
  if (auto prestart = top.get<bool>("prestart_workers")) spec.prestart_workers = *prestart;

  read_trainable(top, source_name, spec);

  if (const toml::table* space = top.table("param_space")) {
    spec.param_space = parse_space(*space, "param_space", source_name);
  }
  check_command_placeholders(spec, top);
  if (const toml::table* search = top.table("search")) {
    TableReader r(*search, "search", source_name);
    spec.search_algorithm = r.get<std::string>("algorithm").value_or("random");
    spec.search_options = r.rest();
    try {
      search::make_searcher(spec.search_algorithm, spec.search_options,
                            {spec.num_samples, spec.seed})
          ->set_search_properties(spec.metric, spec.mode, spec.param_space);
    } catch (const ConfigError& e) {
      if (e.key() == "metric") throw top.error("metric", e.message());
      r.rethrow(e);
    }
  }
  if (const toml::table* scheduler = top.table("scheduler")) {
    TableReader r(*scheduler, "scheduler", source_name);
    spec.scheduler = r.get<std::string>("type").value_or("fifo");
    spec.scheduler_options = r.rest();
    try {
      schedulers::make_scheduler(spec.scheduler, spec.scheduler_options)
          ->set_search_properties(spec.metric, spec.mode);
    } catch (const ConfigError& e) {
      if (e.key() == "metric") throw top.error("metric", e.message());
      r.rethrow(e);
    }
  }
  // BOHB's model learns from the budgets HyperBand's brackets produce; under
  // another scheduler it is a TPE that sees few full-length results.
  if (spec.search_algorithm == "bohb" && spec.scheduler != "hyperband") {
    const toml::table* search = top.table("search");
    throw TableReader(*search, "search", source_name)
        .error("algorithm", fmt::format("\"bohb\" needs [scheduler] type = \"hyperband\" "
                                        "(BOHB pairs its model with HyperBand), got \"{}\"",
                                        spec.scheduler));
  }
  // Ray's HyperBandForBOHB: brackets that fill before they halve.
  if (spec.search_algorithm == "bohb" && !spec.scheduler_options.contains("for_bohb")) {
    spec.scheduler_options["for_bohb"] = true;
  }
  if (const toml::table* stop = top.table("stop")) spec.stop = parse_stop(*stop, source_name);
  if (const toml::table* resources = top.table("resources")) {
    TableReader r(*resources, "resources", source_name);
    if (auto cpus = r.get<double>("cpus")) spec.total_cpus = *cpus;
    if (auto gpus = r.get<int64_t>("gpus")) spec.total_gpus = clamp_int(*gpus);
    r.finish({"cpus", "gpus"});
  }
  if (const toml::table* failure = top.table("failure")) {
    TableReader r(*failure, "failure", source_name);
    if (auto t = r.get<double>("heartbeat_timeout_s")) {
      spec.heartbeat_timeout_s = *t;
      spec.heartbeat_period_s = std::min(spec.heartbeat_period_s, *t / 4);
    }
    if (auto n = r.get<int64_t>("max_failures")) spec.max_failures = clamp_int(*n);
    if (auto f = r.get<bool>("fail_fast")) spec.fail_fast = *f;
    r.finish({"heartbeat_timeout_s", "max_failures", "fail_fast"});
  }
  if (const toml::table* checkpoint = top.table("checkpoint")) {
    TableReader r(*checkpoint, "checkpoint", source_name);
    if (auto n = r.get<int64_t>("num_to_keep")) spec.num_to_keep = clamp_int(*n);
    spec.checkpoint_score_attribute = r.get<std::string>("checkpoint_score_attribute").value_or("");
    if (auto order = r.get<std::string>("checkpoint_score_order")) {
      auto mode = mode_from_string(*order);
      if (!mode) throw r.error("checkpoint_score_order", "use min or max");
      spec.checkpoint_score_order = *mode;
    }
    r.finish({"num_to_keep", "checkpoint_score_attribute", "checkpoint_score_order"});
  }
  if (const toml::table* cluster = top.table("cluster")) {
    spec.cluster = read_cluster(TableReader(*cluster, "cluster", source_name));
  }
  top.finish({"name", "storage_path", "metric", "mode", "num_samples", "max_concurrent_trials",
              "seed", "reuse_workers", "prestart_workers", "trainable", "param_space", "search",
              "scheduler", "stop", "resources", "failure", "checkpoint", "cluster"});
  try {
    validate_spec(spec);
  } catch (const ConfigError& e) {
    // Point at the value the rule names, or at its table when it is absent.
    const toml::node* node = root.at_path(e.key()).node();
    throw ConfigError(e.message(), source_name, node ? line_of(*node) : 0, e.key());
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
