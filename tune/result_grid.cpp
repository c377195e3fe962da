#include "tune/result_grid.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>

#include "core/pareto.h"
#include "storage/experiment_store.h"

namespace tune {
namespace {

// A trial's score for `metric` under `scope`; nullopt when it has no
// numeric value for it.
std::optional<double> score(const Result& r, const std::string& metric, Mode mode,
                            const std::string& scope) {
  std::vector<double> values;
  for (const Json& row : r.history) {
    auto it = row.find(metric);
    if (it != row.end() && it->is_number()) values.push_back(it->get<double>());
  }
  if (values.empty()) return std::nullopt;
  if (scope == "last") return values.back();
  if (scope == "all") {
    std::optional<double> best;
    for (double v : values) {
      if (std::isnan(v)) continue;
      if (!best || (mode == Mode::kMax ? v > *best : v < *best)) best = v;
    }
    return best ? *best : std::nan("");
  }
  size_t window = values.size();
  if (scope == "last-5-avg") window = std::min<size_t>(window, 5);
  if (scope == "last-10-avg") window = std::min<size_t>(window, 10);
  return std::accumulate(values.end() - static_cast<std::ptrdiff_t>(window), values.end(), 0.0) /
         static_cast<double>(window);
}

void flatten(const Json& value, const std::string& prefix, std::map<std::string, Json>& out) {
  if (value.is_object()) {
    for (const auto& [key, v] : value.items()) {
      flatten(v, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else {
    out[prefix] = value;
  }
}

std::string csv_field(const Json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

ResultGrid::ResultGrid(std::vector<Result> results, std::string metric, Mode mode,
                       std::filesystem::path experiment_path, std::vector<Objective> objectives)
    : results_(std::move(results)),
      metric_(std::move(metric)),
      mode_(mode),
      objectives_(std::move(objectives)),
      experiment_path_(std::move(experiment_path)) {}

ResultGrid ResultGrid::from_experiment(const std::filesystem::path& experiment_dir) {
  auto store = storage::ExperimentStore::open_read_only(experiment_dir);
  const auto experiment = store.experiment();
  auto trials = store.trials();
  std::sort(trials.begin(), trials.end(),
            [](const auto& a, const auto& b) { return a.trial_index < b.trial_index; });
  std::vector<Result> results;
  for (const auto& t : trials) {
    Result r;
    r.trial_id = t.trial_id;
    r.status = t.status;
    r.config = t.config;
    r.path = t.trial_dir;
    if (t.status == TrialStatus::kError) r.error = t.error;
    std::map<int64_t, const Json*> by_iteration;
    for (const auto& row : store.results(t.trial_id)) {
      Json m = row.metrics.is_object() ? row.metrics : Json::object();
      m["training_iteration"] = row.training_iteration;
      m["time_this_iter_s"] = row.time_this_iter_s;
      m["time_total_s"] = row.time_total_s;
      m["timestamp"] = row.timestamp;
      m["trial_id"] = t.trial_id;
      r.history.push_back(std::move(m));
    }
    for (const auto& m : r.history) by_iteration[m["training_iteration"].get<int64_t>()] = &m;
    if (!r.history.empty()) r.metrics = r.history.back();
    for (const auto& c : store.checkpoints(t.trial_id)) {
      if (!std::filesystem::is_directory(c.path)) continue;
      auto it = by_iteration.find(c.training_iteration);
      r.best_checkpoints.emplace_back(c.path, it != by_iteration.end() ? *it->second : Json());
      r.checkpoint = c.path;
    }
    results.push_back(std::move(r));
  }
  return ResultGrid(std::move(results), experiment ? experiment->metric : "",
                    experiment ? experiment->mode : Mode::kMin, experiment_dir,
                    experiment ? experiment->objectives : std::vector<Objective>());
}

const Result& ResultGrid::get_best_result(const std::string& metric, std::optional<Mode> mode,
                                          const std::string& scope, bool filter_nan_and_inf) const {
  static const std::vector<std::string> kScopes = {"last", "avg", "last-5-avg", "last-10-avg",
                                                   "all"};
  if (std::find(kScopes.begin(), kScopes.end(), scope) == kScopes.end()) {
    throw ConfigError::at_key(
        "scope", fmt::format("unknown scope '{}'; expected one of last, avg, last-5-avg, "
                             "last-10-avg, all",
                             scope));
  }
  if (metric.empty() && objectives_.size() > 1) {
    std::vector<std::string> names;
    for (const Objective& o : objectives_) {
      names.push_back(fmt::format("{} ({})", o.metric, to_string(o.mode)));
    }
    throw ConfigError::at_key(
        "metric", fmt::format("the experiment has several objectives, {}: pass the metric to "
                              "judge by to get_best_result, or take get_pareto_front()",
                              fmt::join(names, ", ")));
  }
  // One of several objectives: its own mode unless one is given.
  for (const Objective& o : objectives_) {
    if (!mode && o.metric == metric) mode = o.mode;
  }
  const std::string& m = metric.empty() ? metric_ : metric;
  if (m.empty()) {
    throw ConfigError::at_key(
        "metric", "no metric: pass one to get_best_result or set TuneConfig::metric for the Tuner");
  }
  if (!mode && metric_.empty()) {
    throw ConfigError::at_key("mode",
                              "no mode: pass one to get_best_result or set TuneConfig::mode");
  }
  const Mode md = mode.value_or(mode_);
  const Result* best = nullptr;
  double best_score = 0;
  for (const Result& r : results_) {
    // A failed trial's last value is where it broke, not a result.
    if (r.status == TrialStatus::kError || constraint_violation(r.metrics) > 0) continue;
    auto s = score(r, m, md, scope);
    if (!s) continue;
    if (filter_nan_and_inf && !std::isfinite(*s)) continue;
    if (best == nullptr || (md == Mode::kMax ? *s > best_score : *s < best_score)) {
      best = &r;
      best_score = *s;
    }
  }
  if (best == nullptr) {
    throw Error(fmt::format(
        "no best trial for metric '{}': no trial outside ERROR reported it{}", m,
        filter_nan_and_inf ? ", or every score was NaN or infinite (pass filter_nan_and_inf = "
                             "false to keep those)"
                           : ""));
  }
  return *best;
}

std::vector<const Result*> ResultGrid::get_pareto_front() const {
  std::vector<const Result*> members;
  std::vector<core::Point> losses;
  if (objectives_.size() < 2) return members;
  for (const Result& r : results_) {
    if (r.status == TrialStatus::kError) continue;
    core::Point loss;
    for (const Objective& o : objectives_) {
      const auto it = r.metrics.find(o.metric);
      if (it == r.metrics.end() || !it->is_number() || !std::isfinite(it->get<double>())) break;
      loss.push_back(o.mode == Mode::kMax ? -it->get<double>() : it->get<double>());
    }
    if (loss.size() < objectives_.size() || constraint_violation(r.metrics) > 0) continue;
    members.push_back(&r);
    losses.push_back(std::move(loss));
  }
  const std::vector<int> rank = nondominated_ranks(losses);
  std::vector<const Result*> front;
  for (size_t i = 0; i < members.size(); ++i) {
    if (rank[i] == 0) front.push_back(members[i]);
  }
  return front;
}

std::vector<std::string> ResultGrid::errors() const {
  std::vector<std::string> out;
  for (const Result& r : results_) {
    if (r.error) out.push_back(*r.error);
  }
  return out;
}

int64_t ResultGrid::num_errors() const {
  return std::count_if(results_.begin(), results_.end(),
                       [](const Result& r) { return r.status == TrialStatus::kError; });
}

int64_t ResultGrid::num_terminated() const {
  return std::count_if(results_.begin(), results_.end(),
                       [](const Result& r) { return r.status == TrialStatus::kTerminated; });
}

void ResultGrid::to_csv(const std::filesystem::path& file) const {
  std::vector<std::map<std::string, Json>> rows;
  std::vector<std::string> config_columns, metric_columns;
  auto add_column = [](std::vector<std::string>& columns, const std::string& name) {
    if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
  };
  for (const Result& r : results_) {
    std::map<std::string, Json> row;
    std::map<std::string, Json> config;
    flatten(r.config, "", config);
    for (auto& [key, value] : config) {
      add_column(config_columns, "config/" + key);
      row["config/" + key] = value;
    }
    for (const auto& [key, value] : r.metrics.items()) {
      if (key == "trial_id") continue;
      add_column(metric_columns, key);
      row[key] = value;
    }
    row["trial_id"] = r.trial_id;
    row["status"] = std::string(to_string(r.status));
    rows.push_back(std::move(row));
  }
  std::vector<std::string> columns = {"trial_id", "status"};
  columns.insert(columns.end(), config_columns.begin(), config_columns.end());
  columns.insert(columns.end(), metric_columns.begin(), metric_columns.end());
  std::ofstream out(file);
  if (!out) throw Error(fmt::format("cannot write {}", file.string()));
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << csv_field(columns[i]);
  out << "\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i]);
      out << (i ? "," : "") << (it == row.end() ? "" : csv_field(it->second));
    }
    out << "\n";
  }
  if (!out) throw Error(fmt::format("cannot write {}", file.string()));
}

Json ResultGrid::to_json() const {
  Json out = Json::array();
  for (const Result& r : results_) {
    out.push_back({{"trial_id", r.trial_id},
                   {"status", std::string(to_string(r.status))},
                   {"config", r.config},
                   {"metrics", r.metrics},
                   {"path", r.path.string()},
                   {"checkpoint", r.checkpoint ? Json(r.checkpoint->string()) : Json()},
                   {"error", r.error ? Json(*r.error) : Json()}});
  }
  return out;
}

}  // namespace tune
