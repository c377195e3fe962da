#include "storage/internal/rows.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "storage/json_column.h"

namespace tune::storage::internal {

Json parse(const std::string& text, const std::filesystem::path& path, std::string_view what,
           const std::string& nonfinite) {
  try {
    return decode_json_column(text, nonfinite);
  } catch (const Json::exception& e) {
    throw StorageError(fmt::format("{}: {} is not valid JSON: {}", path.string(), what, e.what()));
  }
}

void bind_json(Statement& statement, int index, int side, const Json& value) {
  JsonColumn column = encode_json_column(value);
  statement.bind(index, column.text);
  if (column.nonfinite) {
    statement.bind(side, *column.nonfinite);
  } else {
    statement.bind_null(side);
  }
}

Mode read_mode(const std::string& text, const std::filesystem::path& path) {
  if (auto mode = mode_from_string(text)) return *mode;
  throw StorageError(
      fmt::format("{}: experiment mode '{}' is not min or max", path.string(), text));
}

TrialRecord read_trial(const Statement& row, const std::filesystem::path& path) {
  TrialRecord trial;
  trial.trial_id = row.column_text(0);
  trial.trial_index = row.column_int(1);
  trial.config =
      parse(row.column_text(2), path, "config of trial " + trial.trial_id, row.column_text(12));
  std::string status = row.column_text(3);
  auto parsed = trial_status_from_string(status);
  if (!parsed) {
    throw StorageError(
        fmt::format("{}: trial {} has unknown status '{}'", path.string(), trial.trial_id, status));
  }
  trial.status = *parsed;
  trial.status_reason = row.column_text(4);
  trial.trial_dir = row.column_text(5);
  trial.created_at = row.column_double(6);
  trial.started_at = row.column_optional_double(7);
  trial.finished_at = row.column_optional_double(8);
  trial.last_iteration = row.column_int(9);
  trial.num_failures = row.column_int(10);
  trial.error = row.column_text(11);
  trial.suggest_s = row.column_optional_double(13);
  trial.model_fit_s = row.column_optional_double(14);
  return trial;
}

}  // namespace tune::storage::internal
