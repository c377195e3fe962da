#include "dashboard/api.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace tune::dashboard {
namespace {

constexpr const char* kDatabaseFile = "experiment.db";

std::string query_string(const Query& query) {
  std::string out;
  for (const auto& [k, v] : query) out += (out.empty() ? "?" : "&") + k + "=" + v;
  return out;
}

}  // namespace

std::vector<std::string> Api::experiment_names() const {
  std::vector<std::string> out;
  std::error_code error;
  if (std::filesystem::is_regular_file(options_.root / kDatabaseFile, error)) {
    auto dir = std::filesystem::absolute(options_.root).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();  // "runs/x/" names "x" too
    out.push_back(dir.filename().string());
    return out;
  }
  for (const auto& entry : std::filesystem::directory_iterator(options_.root, error)) {
    if (std::filesystem::is_regular_file(entry.path() / kDatabaseFile, error)) {
      out.push_back(entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::filesystem::path Api::experiment_dir(const std::string& name) const {
  const auto names = experiment_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw NotFound(fmt::format("no experiment '{}' under {}", name, options_.root.string()));
  }
  std::error_code error;
  if (std::filesystem::is_regular_file(options_.root / kDatabaseFile, error)) return options_.root;
  return options_.root / name;
}

Json Api::get(const std::string& path, const Query& query) {
  if (path == "experiments") return experiments();
  if (path == "version") {
    std::string all;
    for (const auto& name : experiment_names()) {
      try {
        all += name + ":" + ExperimentDb::open(experiment_dir(name)).fingerprint() + ";";
      } catch (const StorageError& e) {
        all += name + ":error;";
      }
    }
    return {{"fingerprint", all}};
  }
  if (path.starts_with("exp/")) {
    const size_t slash = path.find('/', 4);
    if (slash != std::string::npos && slash > 4) {
      return experiment(path.substr(4, slash - 4), path.substr(slash + 1), query);
    }
  }
  throw NotFound(fmt::format("no API path '{}'", path));
}

Json Api::experiments() {
  Json out = Json::array();
  for (const auto& name : experiment_names()) {
    try {
      const Json s = experiment(name, "summary", {});
      out.push_back({{"name", name},
                     {"status", s["status"]},
                     {"metric", s["metric"]},
                     {"mode", s["mode"]},
                     {"scheduler", s["scheduler"]},
                     {"counts", s["counts"]},
                     {"num_trials", s["num_trials"]},
                     {"num_results", s["num_results"]},
                     {"best", s["best"].is_object() ? s["best"]["value"] : Json()},
                     {"best_trial", s["best"].is_object() ? s["best"]["trial_id"] : Json()},
                     {"created_at", s["created_at"]},
                     {"updated_at", s["updated_at"]},
                     {"last_result_at", s["last_result_at"]}});
    } catch (const StorageError& e) {
      out.push_back({{"name", name}, {"error", e.what()}});
    }
  }
  return out;
}

Json Api::experiment(const std::string& name, const std::string& what, const Query& query) {
  const ExperimentDb db = ExperimentDb::open(experiment_dir(name));
  const std::string fingerprint = db.fingerprint();
  if (what == "version") return {{"fingerprint", fingerprint}};
  if (what.starts_with("trial/")) return db.trial(what.substr(6), options_.limits);

  const std::string key = name + "/" + what + query_string(query);
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end() && it->second.fingerprint == fingerprint) {
      return it->second.answer;
    }
  }
  Json answer;
  if (what == "summary") {
    answer = db.summary();
  } else if (what == "trials") {
    answer = db.trials();
  } else if (what == "scheduler") {
    answer = db.scheduler();
  } else if (what == "curves") {
    auto metric = query.find("metric");
    answer = db.curves(metric != query.end() ? metric->second : db.objective().first, options_.limits);
  } else if (what == "importance") {
    const Json summary = experiment(name, "summary", {});
    answer = importance(db.trial_points(), summary["params"], db.objective().first,
                        options_.importance);
  } else {
    throw NotFound(fmt::format("no API path 'exp/{}/{}'", name, what));
  }
  std::lock_guard lock(mutex_);
  cache_[key] = {fingerprint, answer};
  return answer;
}

}  // namespace tune::dashboard
