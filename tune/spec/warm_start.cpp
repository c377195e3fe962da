#include "tune/spec/warm_start.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "core/errors.h"
#include "storage/experiment_store.h"

namespace tune {
namespace {

// The value at dotted `path` in `config`, or null.
const Json* at_path(const Json& config, const std::string& path) {
  const Json* node = &config;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

// Every leaf's dotted path in `config`.
void leaf_paths(const Json& config, const std::string& prefix, std::set<std::string>& out) {
  if (!config.is_object()) {
    out.insert(prefix);
    return;
  }
  for (const auto& [key, value] : config.items()) {
    leaf_paths(value, prefix.empty() ? key : prefix + "." + key, out);
  }
}

}  // namespace

WarmStart load_warm_start(const std::vector<std::filesystem::path>& dirs, const ParamSpace& space,
                          uint64_t seed) {
  WarmStart out;
  const auto searched = space.searchable_domains();
  std::set<std::string> known;  // every path this space fills
  leaf_paths(space.describe(), "", known);
  Rng rng(seed ^ 0x5741524d53544152ULL);  // "WARMSTAR": apart from the searcher's own draws
  for (const auto& dir : dirs) {
    if (!std::filesystem::is_regular_file(dir / "experiment.db")) {
      throw ConfigError::at_key("warm_start",
                                fmt::format("no experiment database in {}", dir.string()));
    }
    const auto store = storage::ExperimentStore::open_read_only(dir);
    std::set<std::string> added, dropped;
    size_t count = 0;
    for (const auto& trial : store.trials()) {
      const auto results = store.results(trial.trial_id);
      if (results.empty()) continue;
      size_t d = 0;
      Json config = space.fill([&](const Domain& domain) -> Json {
        const std::string& path = searched[d++].first;
        if (const Json* value = at_path(trial.config, path)) return *value;
        added.insert(path);
        return domain.is_grid() ? domain.values()[0] : domain.sample(rng);
      });
      std::set<std::string> had;
      leaf_paths(trial.config, "", had);
      for (const auto& path : had) {
        if (!known.contains(path)) dropped.insert(path);
      }
      out.trials.push_back({std::move(config), results.back().metrics});
      ++count;
    }
    std::string note = fmt::format("warm start: {} trials from {}", count, dir.string());
    if (!added.empty()) {
      note += fmt::format("; new since, drawn at random for them: {}", fmt::join(added, ", "));
    }
    if (!dropped.empty()) note += fmt::format("; no longer searched: {}", fmt::join(dropped, ", "));
    out.notes.push_back(std::move(note));
  }
  return out;
}

}  // namespace tune
