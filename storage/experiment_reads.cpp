// ExperimentStore's reads: the records back from their rows, and the views
// best_trial and pareto_front with their trials' full records.
#include <fmt/format.h>
#include <sqlite3.h>

#include "core/errors.h"
#include "storage/experiment_store.h"
#include "storage/internal/rows.h"
#include "storage/statement.h"

namespace tune::storage {

using internal::kTrialColumnCount;
using internal::kTrialColumns;
using internal::kTrialTimeColumns;
using internal::parse;
using internal::read_mode;
using internal::read_trial;

std::vector<CheckpointRecord> ExperimentStore::checkpoints(const std::string& trial_id) const {
  Statement query(db_, R"(
      SELECT trial_id, training_iteration, path, created_at, source FROM checkpoints
      WHERE trial_id = ?1 ORDER BY training_iteration)");
  query.bind(1, trial_id);
  std::vector<CheckpointRecord> out;
  while (query.step()) {
    out.push_back({query.column_text(0), query.column_int(1), query.column_text(2),
                   query.column_double(3), query.column_text(4)});
  }
  return out;
}

std::vector<ExploitRecord> ExperimentStore::exploits() const {
  Statement query(db_, fmt::format(R"(
      SELECT trial_id, donor_id, training_iteration, donor_iteration, old_config, new_config, at,
             {}, {}
      FROM exploits ORDER BY id)",
                                   side_column("old_config"), side_column("new_config")));
  std::vector<ExploitRecord> out;
  while (query.step()) {
    out.push_back({query.column_text(0), query.column_text(1), query.column_int(2),
                   query.column_int(3),
                   parse(query.column_text(4), path_, "exploit old_config", query.column_text(7)),
                   parse(query.column_text(5), path_, "exploit new_config", query.column_text(8)),
                   query.column_double(6)});
  }
  return out;
}

std::vector<PlacementRecord> ExperimentStore::placements() const {
  Statement query(db_, R"(
      SELECT trial_id, attempt, rank, host, step, at FROM placements ORDER BY id)");
  std::vector<PlacementRecord> out;
  while (query.step()) {
    out.push_back({query.column_text(0), query.column_int(1), query.column_int(2),
                   query.column_text(3), query.column_text(4), query.column_double(5)});
  }
  return out;
}

std::optional<ExperimentRecord> ExperimentStore::experiment() const {
  Statement query(db_, "SELECT name, metric, mode, spec, created_at, status FROM experiment");
  if (!query.step()) return std::nullopt;
  ExperimentRecord experiment;
  experiment.name = query.column_text(0);
  experiment.metric = query.column_text(1);
  experiment.mode = read_mode(query.column_text(2), path_);
  experiment.spec = parse(query.column_text(3), path_, "experiment spec");
  experiment.created_at = query.column_double(4);
  const std::string status = query.column_text(5);
  auto parsed = experiment_status_from_string(status);
  if (!parsed) {
    throw StorageError(
        fmt::format("{}: the experiment has unknown status '{}'", path_.string(), status));
  }
  experiment.status = *parsed;
  if (objectives_table_) {
    Statement rows(db_, "SELECT metric, mode FROM objectives ORDER BY position");
    while (rows.step()) {
      experiment.objectives.push_back({rows.column_text(0), read_mode(rows.column_text(1), path_)});
    }
    if (experiment.objectives.size() < 2) experiment.objectives.clear();
  }
  return experiment;
}

std::vector<TrialRecord> ExperimentStore::trials() const {
  Statement query(db_, fmt::format("SELECT {} FROM trials ORDER BY trial_index", trial_columns()));
  std::vector<TrialRecord> trials;
  while (query.step()) trials.push_back(read_trial(query, path_));
  return trials;
}

std::vector<ResultRecord> ExperimentStore::results(const std::string& trial_id) const {
  Statement query(db_, fmt::format(R"(
      SELECT training_iteration, timestamp, time_this_iter_s, time_total_s, metrics, {}
      FROM results WHERE trial_id = ?1 ORDER BY training_iteration)",
                                   side_column("metrics")));
  query.bind(1, trial_id);
  std::vector<ResultRecord> results;
  while (query.step()) {
    ResultRecord& result = results.emplace_back();
    result.trial_id = trial_id;
    result.training_iteration = query.column_int(0);
    result.timestamp = query.column_double(1);
    result.time_this_iter_s = query.column_double(2);
    result.time_total_s = query.column_double(3);
    result.metrics =
        parse(query.column_text(4), path_, "metrics of trial " + trial_id, query.column_text(5));
  }
  return results;
}

int64_t ExperimentStore::num_results() const {
  Statement query(db_, "SELECT count(*) FROM results");
  return query.step() ? query.column_int(0) : 0;
}

std::optional<double> ExperimentStore::latest_time() const {
  Statement query(db_, R"(
      SELECT max(t) FROM (
        SELECT max(max(created_at, coalesce(started_at, created_at),
                       coalesce(finished_at, created_at))) AS t FROM trials
        UNION ALL SELECT max(timestamp) FROM results))");
  if (!query.step() || query.is_null(0)) return std::nullopt;
  return query.column_double(0);
}

std::optional<ExperimentStore::Best> ExperimentStore::best_trial() const {
  // The view picks the trial; its full record comes from trials.
  Statement query(db_, fmt::format(R"(
      WITH b AS (SELECT trial_id AS best_id, training_iteration AS best_iteration, metric_value,
                        metrics AS last_metrics FROM best_trial)
      SELECT {}, metric_value, last_metrics,
             (SELECT {} FROM results
              WHERE results.trial_id = best_id AND training_iteration = best_iteration)
      FROM trials JOIN b ON trial_id = best_id)",
                                   trial_columns(), side_column("metrics")));
  if (!query.step()) return std::nullopt;
  Best best;
  best.trial = read_trial(query, path_);
  best.value = query.column_double(kTrialColumnCount);
  best.last_metrics =
      parse(query.column_text(kTrialColumnCount + 1), path_,
            "metrics of trial " + best.trial.trial_id, query.column_text(kTrialColumnCount + 2));
  return best;
}

std::vector<ExperimentStore::FrontMember> ExperimentStore::pareto_front(bool front_only) const {
  std::vector<FrontMember> out;
  if (!objectives_table_) return out;
  Statement query(db_, fmt::format(R"(
      WITH p AS (SELECT trial_id AS front_id, rank, crowding, objective_values,
                        metrics AS last_metrics, training_iteration AS front_iteration
                 FROM pareto_front {})
      SELECT {}, p.rank, p.crowding, p.objective_values, p.last_metrics,
             (SELECT {} FROM results AS r
              WHERE r.trial_id = p.front_id AND r.training_iteration = p.front_iteration)
      FROM trials JOIN p ON trial_id = p.front_id
      ORDER BY p.rank, p.crowding DESC, trial_index)",
                                   front_only ? "WHERE rank = 0" : "", trial_columns(),
                                   side_column("metrics")));
  while (query.step()) {
    FrontMember& m = out.emplace_back();
    m.trial = read_trial(query, path_);
    m.rank = query.column_int(kTrialColumnCount);
    m.crowding = query.column_double(kTrialColumnCount + 1);
    m.values = parse(query.column_text(kTrialColumnCount + 2), path_, "objective values");
    m.last_metrics =
        parse(query.column_text(kTrialColumnCount + 3), path_,
              "metrics of trial " + m.trial.trial_id, query.column_text(kTrialColumnCount + 4));
  }
  return out;
}

std::string ExperimentStore::side_column(std::string_view column) const {
  return nonfinite_columns_ ? fmt::format("{}_nonfinite", column) : std::string("NULL");
}

std::string ExperimentStore::trial_columns() const {
  std::string_view columns = kTrialColumns;
  if (!nonfinite_columns_) columns.remove_suffix(std::string_view("config_nonfinite").size());
  return fmt::format("{}{}, {}", columns, nonfinite_columns_ ? "" : "NULL",
                     search_time_columns_ ? kTrialTimeColumns : "NULL, NULL");
}

}  // namespace tune::storage
