// Turns an experiment database into what schema version 3 wrote: no
// trial_last_result and its triggers, no trials.suggest_s and model_fit_s,
// and the views that searched each
// trial's results for its last one. Tests compare the kept last results
// with what those views computed, and open such files as older tunerun
// builds left them.
#pragma once

#include "sql.h"

namespace tune::test {

// Version 3's last_results and best_trial, as its schema.sql created them.
inline constexpr const char* kVersion3Views = R"(
CREATE VIEW last_results AS
SELECT a.*
FROM all_results AS a
WHERE a.training_iteration =
      (SELECT MAX(r.training_iteration) FROM results AS r WHERE r.trial_id = a.trial_id);
CREATE VIEW best_trial AS
SELECT
  l.trial_id,
  l.config,
  e.metric,
  l.metric_value,
  l.training_iteration,
  l.status,
  l.metrics
FROM last_results AS l
JOIN experiment AS e ON e.id = 1
WHERE l.metric_value IS NOT NULL AND l.feasible
ORDER BY CASE e.mode WHEN 'max' THEN -l.metric_value ELSE l.metric_value END,
         l.trial_index, l.training_iteration
LIMIT 1;)";

// `sql` must be opened read-write on a file of this build's schema.
inline void make_version_3(Sql& sql) {
  // Columns first: SQLite checks every view when one is dropped.
  sql.exec("ALTER TABLE trials DROP COLUMN suggest_s; ALTER TABLE trials DROP COLUMN model_fit_s");
  sql.exec(R"(
      DROP TRIGGER IF EXISTS trial_last_result_on_insert; DROP TRIGGER trial_last_result_on_delete;
      DROP TRIGGER trial_last_result_on_update; DROP TRIGGER trial_last_result_on_metric;
      DROP VIEW best_trial; DROP VIEW last_results; DROP TABLE trial_last_result;)");
  sql.exec(kVersion3Views);
  sql.exec(R"(UPDATE schema_info SET value = '3' WHERE key = 'schema_version';
              PRAGMA user_version = 3;)");
}

}  // namespace tune::test
