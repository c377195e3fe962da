// `tunerun results EXPERIMENT_DIR`: every result of an experiment, one row
// per result (or per trial with --last), as an aligned table, CSV or JSON.
//
// Columns, in order: trial_id, training_iteration, timestamp,
// time_this_iter_s, time_total_s; the config flattened with dotted names
// (config.lr, config.model.width); then the metrics (sorted by name, or the
// --metric ones in the order given). CSV quotes as RFC 4180 does and leaves
// a missing value empty; JSON is an array of flat objects with those column
// names, one per line, without the keys a row lacks. A non-finite metric is
// stored as null and prints as null (JSON), empty (CSV) or "null" (table).
// Reads the database while an experiment runs without blocking it.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>

#include "storage/experiment_store.h"
#include "tune/cli/commands.h"

namespace tune::cli {
namespace {

using Row = nlohmann::ordered_json;  // keeps the column order in JSON output

struct ResultsOptions {
  std::string experiment_dir;
  std::string format = "table";
  std::vector<std::string> trials;   // empty: every trial
  std::vector<std::string> metrics;  // empty: every metric
  bool last = false;                 // only each trial's last result
};

void flatten(const Json& value, const std::string& prefix, Row& row,
             std::vector<std::string>& columns) {
  if (value.is_object()) {
    for (const auto& [key, v] : value.items()) flatten(v, prefix + "." + key, row, columns);
    return;
  }
  if (std::find(columns.begin(), columns.end(), prefix) == columns.end()) columns.push_back(prefix);
  row[prefix] = value;
}

// The rows to print and their columns.
struct Table {
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

Table collect(const storage::ExperimentStore& store, const ResultsOptions& options) {
  auto trials = store.trials();
  for (const auto& id : options.trials) {
    if (std::none_of(trials.begin(), trials.end(),
                     [&](const auto& t) { return t.trial_id == id; })) {
      fmt::print(stderr, "error: no trial '{}' in {}\n", id, options.experiment_dir);
      throw ExitRequest{kExitBadInput};
    }
  }
  Table table{{"trial_id", "training_iteration", "timestamp", "time_this_iter_s", "time_total_s"},
              {}};
  std::vector<std::string> config_columns;
  std::set<std::string> metric_names;
  std::vector<Json> metrics_of_rows;
  for (const auto& trial : trials) {
    if (!options.trials.empty() && std::find(options.trials.begin(), options.trials.end(),
                                             trial.trial_id) == options.trials.end()) {
      continue;
    }
    auto results = store.results(trial.trial_id);
    if (options.last && results.size() > 1) results.erase(results.begin(), results.end() - 1);
    for (const auto& result : results) {
      Row row = {{"trial_id", trial.trial_id},
                 {"training_iteration", result.training_iteration},
                 {"timestamp", result.timestamp},
                 {"time_this_iter_s", result.time_this_iter_s},
                 {"time_total_s", result.time_total_s}};
      flatten(trial.config, "config", row, config_columns);
      for (const auto& [name, value] : result.metrics.items()) metric_names.insert(name);
      metrics_of_rows.push_back(result.metrics);
      table.rows.push_back(std::move(row));
    }
  }
  std::vector<std::string> metric_columns = options.metrics;
  for (const auto& name : metric_columns) {
    if (metric_names.contains(name) || table.rows.empty()) continue;
    fmt::print(stderr, "error: no result in {} has the metric '{}'; its metrics are: {}\n",
               options.experiment_dir, name, fmt::join(metric_names, ", "));
    throw ExitRequest{kExitBadInput};
  }
  if (metric_columns.empty()) metric_columns.assign(metric_names.begin(), metric_names.end());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    for (const auto& name : metric_columns) {
      if (auto it = metrics_of_rows[i].find(name); it != metrics_of_rows[i].end()) {
        table.rows[i][name] = *it;
      }
    }
  }
  table.columns.insert(table.columns.end(), config_columns.begin(), config_columns.end());
  table.columns.insert(table.columns.end(), metric_columns.begin(), metric_columns.end());
  return table;
}

// A cell's text: strings as they are, numbers and the rest as JSON; "" when absent.
std::string cell(const Row& row, const std::string& column, bool for_person) {
  auto it = row.find(column);
  if (it == row.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (for_person && it->is_number_float()) {
    const double v = it->get<double>();
    return std::abs(v) >= 1e6 ? fmt::format("{:.3f}", v) : fmt::format("{:.6g}", v);
  }
  return it->dump();
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void print_csv(const Table& table) {
  std::string out;
  auto line = [&](auto&& field_of) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_field(field_of(table.columns[c]));
    }
    out += "\r\n";  // RFC 4180 line ends; every CSV reader accepts them
  };
  line([](const std::string& column) { return column; });
  for (const auto& row : table.rows) {
    line([&](const std::string& column) {
      auto it = row.find(column);
      return it == row.end() || it->is_null() ? std::string() : cell(row, column, false);
    });
  }
  fmt::print("{}", out);
}

void print_json(const Table& table) {
  fmt::print("[");
  for (size_t i = 0; i < table.rows.size(); ++i) {
    fmt::print("{}\n{}", i == 0 ? "" : ",", table.rows[i].dump());
  }
  fmt::print("{}]\n", table.rows.empty() ? "" : "\n");
}

void print_table(const Table& table) {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width;
  for (const auto& column : table.columns) width.push_back(column.size());
  for (const auto& row : table.rows) {
    auto& line = cells.emplace_back();
    for (size_t c = 0; c < table.columns.size(); ++c) {
      line.push_back(cell(row, table.columns[c], true));
      width[c] = std::max(width[c], line.back().size());
    }
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string out;
    for (size_t c = 0; c < line.size(); ++c) {
      out += fmt::format("{}{:<{}}", c == 0 ? "" : "  ", line[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    fmt::print("{}\n", out);
  };
  print_line(table.columns);
  for (const auto& line : cells) print_line(line);
  if (table.rows.empty()) fmt::print(stderr, "(no results)\n");
}

void results(const ResultsOptions& options) {
  storage::ExperimentStore store = [&] {
    try {
      return storage::ExperimentStore::open_read_only(options.experiment_dir);
    } catch (const StorageError& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      throw ExitRequest{kExitBadInput};
    }
  }();
  const Table table = collect(store, options);
  if (options.format == "csv") {
    print_csv(table);
  } else if (options.format == "json") {
    print_json(table);
  } else {
    print_table(table);
  }
}

}  // namespace

void setup_results(CLI::App& app) {
  auto options = std::make_shared<ResultsOptions>();
  CLI::App* cmd =
      app.add_subcommand("results", "Print an experiment's results as a table, CSV or JSON");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--format", options->format, "table (default), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--trial", options->trials, "Only this trial (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--metric", options->metrics, "Only this metric column (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--last", options->last, "Only each trial's last result");
  cmd->callback([options] { results(*options); });
}

}  // namespace tune::cli
