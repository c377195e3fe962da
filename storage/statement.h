// Statement: one prepared SQLite statement that finalizes itself, with bind
// and column helpers: how the store and the dashboard read an experiment
// database (its schema and views are a public contract: docs/results-database.md).
// Every failure throws StorageError naming the database file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tune::storage {

// Throws StorageError "<database file>: <what>: <sqlite3_errmsg>".
[[noreturn]] void throw_error(sqlite3* db, std::string_view what);

// Runs SQL without results (one or more statements); throws on failure.
void exec(sqlite3* db, const char* sql);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQL's ?1. Text is copied.
  Statement& bind(int index, double value);
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::optional<double>& value);  // nullopt binds NULL
  Statement& bind_null(int index);

  // Advances to the next row: true when one is ready, false when done.
  bool step();
  // Steps to completion and resets, so a cached statement can run again.
  void run();
  void reset();

  // Columns are numbered from 0. NULL reads as 0, "" or nullopt.
  bool is_null(int column) const;
  double column_double(int column) const;
  int64_t column_int(int column) const;
  std::string column_text(int column) const;
  std::optional<double> column_optional_double(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tune::storage
