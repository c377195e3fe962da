#include "train/builtins/curve_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "core/errors.h"

namespace tune::sim {
namespace {

// One field of a line: its text, trimmed, and the column it starts at.
struct Field {
  std::string_view text;
  size_t column = 1;
};

std::vector<Field> split(std::string_view line) {
  std::vector<Field> fields;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(line.find(',', begin), line.size());
    size_t first = begin, last = end;
    while (first < last && (line[first] == ' ' || line[first] == '\t')) ++first;
    while (last > first && (line[last - 1] == ' ' || line[last - 1] == '\t')) --last;
    fields.push_back({line.substr(first, last - first), first + 1});
    if (end == line.size()) return fields;
    begin = end + 1;
  }
}

std::optional<double> number(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A parameter value as the rows' key spells it: numbers by value, so that
// 0.010 in the file and 0.01 in a config meet.
std::string token(std::string_view text) {
  if (const auto n = number(text)) return fmt::format("n{}", *n);
  return fmt::format("s{}", text);
}

std::string token(const Json& value) {
  if (value.is_number()) return fmt::format("n{}", value.get<double>());
  if (value.is_string()) return "s" + value.get<std::string>();
  return "s" + value.dump();
}

constexpr char kSeparator = '\x1f';

// A row before its config's rows are put in epoch order.
struct Row {
  int64_t epoch = 0;
  size_t line = 0, column = 0;  // of its epoch cell
  Json metrics = Json::object();
  std::optional<double> epoch_s;
};

}  // namespace

CurveTable CurveTable::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("{}: cannot read the curve table", file.string()));
  CurveTable table;
  table.file_ = file;
  auto fail = [&](size_t line, size_t column, const std::string& what) {
    return Error(fmt::format("{}:{}:{}: {}", file.string(), line, column, what));
  };
  std::vector<std::string> header;
  size_t epoch_column = 0;  // index of `epoch` in the header
  std::optional<size_t> epoch_s_column;
  std::map<std::string, std::vector<Row>> rows;
  std::string text;
  for (size_t line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos || text[first] == '#') continue;
    const auto fields = split(text);
    if (header.empty()) {
      for (const Field& f : fields) {
        if (f.text.empty()) throw fail(line, f.column, "a column without a name");
        if (std::find(header.begin(), header.end(), f.text) != header.end()) {
          throw fail(line, f.column, fmt::format("column '{}' named twice", f.text));
        }
        header.emplace_back(f.text);
      }
      const auto epoch = std::find(header.begin(), header.end(), "epoch");
      if (epoch == header.end()) {
        throw Error(fmt::format("{}: the header names no 'epoch' column", file.string()));
      }
      epoch_column = epoch - header.begin();
      table.parameters_.assign(header.begin(), epoch);
      table.values_.resize(table.parameters_.size());
      for (size_t c = epoch_column + 1; c < header.size(); ++c) {
        if (header[c] == "epoch_s") {
          epoch_s_column = c;
        } else {
          table.metrics_.push_back(header[c]);
        }
      }
      if (table.metrics_.empty()) {
        throw Error(fmt::format("{}: no metric column after 'epoch'", file.string()));
      }
      continue;
    }
    if (fields.size() != header.size()) {
      throw fail(line, 1,
                 fmt::format("{} fields, the header has {}", fields.size(), header.size()));
    }
    Row row{.line = line, .column = fields[epoch_column].column};
    std::string key;
    for (size_t c = 0; c < header.size(); ++c) {
      const Field& f = fields[c];
      if (c < epoch_column) {
        if (f.text.empty()) throw fail(line, f.column, fmt::format("'{}' is empty", header[c]));
        key += token(f.text) + kSeparator;
        table.values_[c].insert(token(f.text));
        continue;
      }
      const auto value = number(f.text);
      if (!value) {
        throw fail(line, f.column, fmt::format("'{}' is not a number ({})", f.text, header[c]));
      }
      if (c == epoch_column) {
        if (*value != std::floor(*value)) {
          throw fail(line, f.column, fmt::format("epoch '{}' is not an integer", f.text));
        }
        row.epoch = static_cast<int64_t>(*value);
      } else if (c == epoch_s_column) {
        if (!(*value >= 0)) throw fail(line, f.column, "epoch_s must be >= 0");
        row.epoch_s = *value;
      } else {
        row.metrics[header[c]] = *value;
      }
    }
    rows[key].push_back(std::move(row));
  }
  if (header.empty()) throw Error(fmt::format("{}: no header (the file is empty)", file.string()));
  for (auto& [key, list] : rows) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Row& a, const Row& b) { return a.epoch < b.epoch; });
    Curve& curve = table.curves_[key];
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0 && list[i].epoch == list[i - 1].epoch) {
        const Row& later = std::max(list[i], list[i - 1],
                                    [](const Row& a, const Row& b) { return a.line < b.line; });
        throw fail(later.line, later.column,
                   fmt::format("epoch {} of this config again (first at line {})", later.epoch,
                               std::min(list[i].line, list[i - 1].line)));
      }
      curve.metrics.push_back(std::move(list[i].metrics));
      curve.epoch_s.push_back(list[i].epoch_s);
    }
  }
  return table;
}

bool CurveTable::column_holds(size_t column, const Json& value) const {
  return values_.at(column).contains(token(value));
}

const CurveTable::Curve& CurveTable::curve_for(const Config& config) const {
  std::string key, values;
  for (const std::string& name : parameters_) {
    if (!config.contains(name)) {
      throw ConfigError::at_key(
          name, fmt::format("the config has no value for column '{}' of the curve table {}", name,
                            file_.string()));
    }
    std::string pointer = "/" + name;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    const Json& value = config.json().at(Json::json_pointer(pointer));
    key += token(value) + kSeparator;
    values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", name, value.dump());
  }
  const auto it = curves_.find(key);
  if (it == curves_.end()) {
    throw Error(fmt::format("the config {} ({}) has no rows in the curve table {}", config.dump(),
                            values, file_.string()));
  }
  return it->second;
}

}  // namespace tune::sim
