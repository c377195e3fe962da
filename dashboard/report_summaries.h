// Every trial's summary for the static report's table, in compact rows: a
// 100,000-trial report holds them all in tens of megabytes, where the live
// API's rows (objects with every key spelled out, full precision) would
// take more than the whole report may.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dashboard/experiment_db.h"

namespace tune::dashboard {

struct Summaries {
  // {"config_keys": [...], "metric_keys": [the objectives first, ...], "rows": [[trial_id,
  // index, status, iteration, error, reason, [config values], [metric values]], ...]}, rows in
  // creation order; numbers with 6 significant digits (the table shows 5). A row's arrays
  // follow the key lists and may be shorter (a key first seen later; a trimmed row).
  std::string text;
  std::vector<std::string> ids;         // every trial, in creation order
  std::optional<int64_t> trimmed_from;  // the first trial index whose row keeps no reason and
                                        // only the objectives' values (the budget was spent)
};

// Reads every trial of `db`, a page at a time (memory: one page). Past
// `max_bytes` of rows, each row keeps only the objectives among its metrics
// and no reason.
Summaries report_summaries(const ExperimentDb& db, const std::vector<std::string>& objectives,
                           size_t max_bytes);

}  // namespace tune::dashboard
