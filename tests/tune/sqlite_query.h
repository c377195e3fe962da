// Reading an experiment database in tests through the plain SQLite C API,
// as a user's own tools would (no tunerun code).
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tune::test {

// Rows of `sql` as strings; NULL reads "NULL".
inline std::vector<std::vector<std::string>> query(const std::filesystem::path& db,
                                                   const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(handle, 5000);  // a running experiment may be creating its schema
  std::vector<std::vector<std::string>> rows;
  char* error = nullptr;
  sqlite3_exec(
      handle, sql.c_str(),
      [](void* out, int n, char** values, char**) {
        auto& rows = *static_cast<std::vector<std::vector<std::string>>*>(out);
        rows.emplace_back();
        for (int i = 0; i < n; ++i) rows.back().emplace_back(values[i] ? values[i] : "NULL");
        return 0;
      },
      &rows, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  INFO(sql);
  CHECK(message == "");
  return rows;
}

}  // namespace tune::test
