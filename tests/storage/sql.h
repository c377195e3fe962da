// Sql: a raw connection to an experiment database, the way a user queries
// it with the sqlite3 CLI or pandas; failures fail the test.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tune::test {

class Sql {
 public:
  explicit Sql(const std::filesystem::path& file, int flags = SQLITE_OPEN_READONLY) {
    REQUIRE(sqlite3_open_v2(file.c_str(), &db_, flags, nullptr) == SQLITE_OK);
  }
  ~Sql() { sqlite3_close(db_); }
  sqlite3* get() const { return db_; }

  void exec(const std::string& sql) {
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    std::string message = error ? error : "";
    sqlite3_free(error);
    REQUIRE_MESSAGE(rc == SQLITE_OK, sql << ": " << message);
  }

  // Every row, every column as text ("NULL" for NULL).
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK,
                    sqlite3_errmsg(db_));
    std::vector<std::vector<std::string>> rows;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      auto& row = rows.emplace_back();
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const auto* text = sqlite3_column_text(stmt, i);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "NULL");
      }
    }
    sqlite3_finalize(stmt);
    return rows;
  }

  std::string scalar(const std::string& sql) {
    auto all = rows(sql);
    REQUIRE_MESSAGE(all.size() == 1, sql);
    return all[0][0];
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace tune::test
