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

Json Api::get(const std::string& path, const Query& query) { return answer(path, query)->json; }

std::shared_ptr<const std::string> Api::get_text(const std::string& path, const Query& query) {
  auto a = answer(path, query);
  std::call_once(a->dumped, [&] {
    // Metrics and logs are user data: invalid UTF-8 is replaced, never thrown on.
    a->text = std::make_shared<const std::string>(
        a->json.dump(-1, ' ', false, Json::error_handler_t::replace));
  });
  return a->text;
}

std::shared_ptr<Api::Answer> Api::answer(const std::string& path, const Query& query) {
  auto uncached = [](Json json) {
    auto a = std::make_shared<Answer>();
    a->json = std::move(json);
    return a;
  };
  if (path == "experiments") return uncached(experiments());
  if (path == "version") {
    std::string all;
    for (const auto& name : experiment_names()) {
      try {
        all += name + ":" + ExperimentDb::open(experiment_dir(name)).fingerprint() + ";";
      } catch (const StorageError& e) {
        all += name + ":error;";
      }
    }
    return uncached({{"fingerprint", all}});
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
      const auto summary = experiment(name, "summary", {});
      const Json& s = summary->json;
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

std::shared_ptr<Api::Answer> Api::experiment(const std::string& name, const std::string& what,
                                             const Query& query) {
  const ExperimentDb db = ExperimentDb::open(experiment_dir(name));
  const std::string fingerprint = db.fingerprint();
  auto fresh = std::make_shared<Answer>();
  if (what == "version") {
    fresh->json = {{"fingerprint", fingerprint}};
    return fresh;
  }
  if (what.starts_with("trial/")) {
    fresh->json = db.trial(what.substr(6), options_.limits);
    return fresh;
  }

  const std::string key = name + "/" + what + query_string(query);
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end() && it->second->fingerprint == fingerprint) {
      return it->second;
    }
  }
  if (what == "summary") {
    fresh->json = db.summary();
  } else if (what == "trials") {
    fresh->json = db.trials();
  } else if (what == "scheduler") {
    fresh->json = db.scheduler();
  } else if (what == "curves") {
    auto metric = query.find("metric");
    fresh->json =
        db.curves(metric != query.end() ? metric->second : db.objective().first, options_.limits);
  } else if (what == "importance") {
    const Json params = experiment(name, "summary", {})->json["params"];
    fresh->json = importance(db.trial_points(), params, db.objective().first, options_.importance);
  } else {
    throw NotFound(fmt::format("no API path 'exp/{}/{}'", name, what));
  }
  fresh->fingerprint = fingerprint;
  std::lock_guard lock(mutex_);
  cache_[key] = fresh;
  return fresh;
}

}  // namespace tune::dashboard
