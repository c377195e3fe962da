#include "dashboard/api.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>

#include "core/errors.h"
#include "storage/statement.h"

namespace tune::dashboard {
namespace {

constexpr const char* kDatabaseFile = "experiment.db";

// A count in the query string; `fallback` when absent or not a whole number.
int64_t count_param(const Query& query, const std::string& key, int64_t fallback) {
  auto it = query.find(key);
  if (it == query.end()) return fallback;
  try {
    size_t used = 0;
    const int64_t value = std::stoll(it->second, &used);
    return used == it->second.size() ? value : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

bool is_page(const std::string& what, const Query& query) {
  return what == "trials" && (query.contains("offset") || query.contains("limit"));
}

TrialOrder order_of(const Query& query) {
  TrialOrder out;
  if (auto it = query.find("sort"); it != query.end() && !it->second.empty()) out.sort = it->second;
  if (auto it = query.find("desc"); it != query.end()) out.descending = it->second == "1";
  if (auto it = query.find("filter"); it != query.end()) out.filter = it->second;
  return out;
}

// A delta of the charts' trials: one per poll, never asked twice.
bool is_delta(const std::string& what, const Query& query) {
  return what == "sample" && query.contains("since");
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

std::optional<std::pair<std::string, std::string>> Api::split(const std::string& path) {
  if (!path.starts_with("exp/")) return std::nullopt;
  const size_t slash = path.find('/', 4);
  if (slash == std::string::npos || slash == 4) return std::nullopt;
  return std::make_pair(path.substr(4, slash - 4), path.substr(slash + 1));
}

Json Api::get(const std::string& path, const Query& query) { return compute(path, query); }

std::shared_ptr<const std::string> Api::get_text(const std::string& path, const Query& query) {
  auto dumped = [](const Json& json) {
    // Metrics and logs are user data: invalid UTF-8 is replaced, never thrown on.
    return std::make_shared<const std::string>(
        json.dump(-1, ' ', false, Json::error_handler_t::replace));
  };
  const auto parts = split(path);
  // Cached: an experiment's answers but its version (cheaper than a lookup)
  // and its trials (one per trial: a cache of them would only churn).
  if (!parts || parts->second == "version" || parts->second.starts_with("trial/") ||
      is_delta(parts->second, query)) {
    return dumped(compute(path, query));
  }
  const auto& [name, what] = *parts;
  const ExperimentDb db = ExperimentDb::open(experiment_dir(name));
  const std::string fingerprint = db.fingerprint();
  std::string key = name + "/" + what;
  for (const char* param : {"metric", "mode"}) {
    if ((what == "curves" || what == "importance") && query.contains(param)) {
      key += fmt::format("{}{}={}", key.find('?') == std::string::npos ? "?" : "&", param,
                         query.at(param));
    }
  }
  if (is_page(what, query)) {
    const TrialOrder order = order_of(query);
    key += fmt::format("?offset={}&limit={}&sort={}&desc={}&filter={}",
                       count_param(query, "offset", 0),
                       count_param(query, "limit", options_.limits.max_page_trials), order.sort,
                       order.descending, order.filter);
  }
  {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second->fingerprint == fingerprint) {
      lru_.splice(lru_.begin(), lru_, it->second);  // most recently used
      return it->second->text;
    }
  }
  auto text = what == "trials" && !is_page(what, query)
                  ? std::make_shared<const std::string>(whole_trial_list(db))
                  : dumped(experiment(db, name, what, query));
  // The answer's parsed rows and the database pages are freed: give them
  // back to the system (glibc keeps freed memory in each thread's arena), so
  // the server holds what the cache holds, not its largest answer's peak.
  malloc_trim(0);
  std::lock_guard lock(mutex_);
  remember({key, name, fingerprint, text});
  return text;
}

std::string Api::whole_trial_list(const ExperimentDb& db) {
  // A page of rows parsed at a time: every row at once would be a parse
  // tree of hundreds of megabytes at 100,000 trials.
  constexpr int64_t kPage = 2000;
  // One read transaction: every page from the same state of the file.
  storage::exec(db.handle(), "BEGIN");
  std::string out = "[";
  for (int64_t offset = 0;; offset += kPage) {
    const Json page = db.trial_page(offset, kPage);
    for (const Json& row : page["trials"]) {
      if (out.size() > 1) out += ',';
      out += row.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    if (page["trials"].size() < static_cast<size_t>(kPage)) break;
  }
  out += ']';
  storage::exec(db.handle(), "COMMIT");
  return out;
}

void Api::remember(Entry entry) {
  // A new fingerprint: the experiment's older answers can never be asked for again.
  std::string& latest = fingerprints_[entry.experiment];
  if (latest != entry.fingerprint) {
    latest = entry.fingerprint;
    for (auto it = lru_.begin(); it != lru_.end();) {
      if (it->experiment == entry.experiment && it->fingerprint != entry.fingerprint) {
        cache_bytes_ -= it->text->size();
        cache_.erase(it->key);
        it = lru_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (auto it = cache_.find(entry.key); it != cache_.end()) {
    cache_bytes_ -= it->second->text->size();
    lru_.erase(it->second);
    cache_.erase(it);
  }
  // One answer may take an eighth of the cache (the whole trial list of a
  // large sweep, for scripts, is asked for once and would empty it).
  if (entry.text->size() > options_.cache_bytes / 8 || options_.cache_entries == 0) return;
  cache_bytes_ += entry.text->size();
  lru_.push_front(std::move(entry));
  cache_[lru_.front().key] = lru_.begin();
  while (cache_.size() > options_.cache_entries || cache_bytes_ > options_.cache_bytes) {
    cache_bytes_ -= lru_.back().text->size();
    cache_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

Api::CacheStats Api::cache_stats() const {
  std::lock_guard lock(mutex_);
  return {cache_.size(), cache_bytes_};
}

Json Api::compute(const std::string& path, const Query& query) {
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
  if (const auto parts = split(path)) {
    const ExperimentDb db = ExperimentDb::open(experiment_dir(parts->first));
    return experiment(db, parts->first, parts->second, query);
  }
  throw NotFound(fmt::format("no API path '{}'", path));
}

Json Api::summary_of(const ExperimentDb& db, const std::string& name) {
  const std::string fingerprint = db.fingerprint();
  {
    std::lock_guard lock(mutex_);
    auto it = summaries_.find(name);
    if (it != summaries_.end() && it->second.first == fingerprint) return it->second.second;
  }
  Json summary = db.summary();
  std::lock_guard lock(mutex_);
  summaries_[name] = {fingerprint, summary};
  return summary;
}

Json Api::experiments() {
  Json out = Json::array();
  for (const auto& name : experiment_names()) {
    try {
      const Json s = summary_of(ExperimentDb::open(experiment_dir(name)), name);
      out.push_back({{"name", name},
                     {"status", s["status"]},
                     {"metric", s["metric"]},
                     {"mode", s["mode"]},
                     {"objectives", s["objectives"]},
                     {"search", s["search"]},
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

Json Api::experiment(const ExperimentDb& db, const std::string& name, const std::string& what,
                     const Query& query) {
  if (what == "version") return {{"fingerprint", db.fingerprint()}};
  if (what.starts_with("trial/")) return db.trial(what.substr(6), options_.limits);
  if (what == "summary") return summary_of(db, name);
  if (is_page(what, query)) {
    const int64_t most = options_.limits.max_page_trials;
    return db.trial_page(count_param(query, "offset", 0),
                         std::min(count_param(query, "limit", most), most), order_of(query));
  }
  if (what == "sample") {
    const size_t most = options_.limits.max_chart_trials;
    if (!query.contains("since")) return db.trial_sample(most);
    return db.trial_sample_since(most, query.at("since"), count_param(query, "stride", 0));
  }
  if (what == "trials") return db.trials();
  if (what == "scheduler") return db.scheduler();
  if (what == "front") return db.front();
  if (what == "curves") {
    auto metric = query.find("metric");
    auto mode = query.find("mode");
    return db.curves(metric != query.end() ? metric->second : db.objective().first, options_.limits,
                     mode != query.end() ? mode->second : "");
  }
  if (what == "importance") {
    auto metric = query.find("metric");
    return importance_at_one_budget(db, db.params(),
                                    metric != query.end() ? metric->second : db.objective().first,
                                    options_.importance);
  }
  throw NotFound(fmt::format("no API path 'exp/{}/{}'", name, what));
}

}  // namespace tune::dashboard
