// How ExperimentStore's rows map to its records, shared by its writes
// (experiment_store.cpp) and its reads (experiment_reads.cpp): JSON columns
// with their side columns, the trials columns in TrialRecord order, modes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/config.h"
#include "core/types.h"
#include "storage/experiment_store.h"
#include "storage/statement.h"

namespace tune::storage::internal {

// A JSON column's text, `nonfinite` its side column ("" when NULL or
// absent). Throws StorageError naming `path` and `what` when it is not JSON.
Json parse(const std::string& text, const std::filesystem::path& path, std::string_view what,
           const std::string& nonfinite = {});

// Binds a JSON value to parameter `index` and its side column to `side`.
void bind_json(Statement& statement, int index, int side, const Json& value);

// The experiment's mode column; throws StorageError for another word.
Mode read_mode(const std::string& text, const std::filesystem::path& path);

// The trials columns in TrialRecord order, and config's side column last;
// read_trial() reads them back.
inline constexpr std::string_view kTrialColumns =
    "trial_id, trial_index, config, status, status_reason, trial_dir, created_at, started_at, "
    "finished_at, last_iteration, num_failures, error, config_nonfinite";
// What reads select: those, then the suggest call's times (schema version
// 6 on), which put_trial leaves alone (set_trial_search_time writes them).
inline constexpr std::string_view kTrialTimeColumns = "suggest_s, model_fit_s";
inline constexpr int kTrialColumnCount = 15;

TrialRecord read_trial(const Statement& row, const std::filesystem::path& path);

}  // namespace tune::storage::internal
