#include "storage/statement.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tune::storage {
namespace {

// Enough of a statement to recognise it in an error message.
std::string_view excerpt(std::string_view sql) { return sql.substr(0, 60); }

// SQLite's error `code` (and its `message`) on `db` while doing `what`, as
// the user reads it: a corrupt or foreign file says so once, with its path;
// a full disk is marked for the CLI to say how to go on.
[[noreturn]] void throw_storage_error(sqlite3* db, int code, std::string_view what,
                                      const std::string& message) {
  const char* file = sqlite3_db_filename(db, "main");
  const std::string path = file != nullptr && *file != '\0' ? file : "?";
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      throw StorageError(
          fmt::format("{} is not a readable tunerun database (SQLite: {})", path, message));
    case SQLITE_FULL:
      throw StorageError(fmt::format("{}: {}: {}", path, what, message),
                         StorageError::Cause::kDiskFull);
    default:
      throw StorageError(fmt::format("{}: {}: {}", path, what, message));
  }
}

}  // namespace

void throw_error(sqlite3* db, std::string_view what) {
  throw_storage_error(db, sqlite3_errcode(db), what, sqlite3_errmsg(db));
}

void exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    throw_error(db, excerpt(sql));
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    throw_error(db, fmt::format("preparing '{}'", excerpt(sql)));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) throw_error(db_, "bind");
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) throw_error(db_, "bind");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                          SQLITE_UTF8) != SQLITE_OK) {
    throw_error(db_, "bind");
  }
  return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) throw_error(db_, "bind");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Keep the code and message: reset() would replace them.
  const int code = sqlite3_extended_errcode(db_);
  const std::string message = sqlite3_errmsg(db_);
  const std::string what(excerpt(sqlite3_sql(stmt_)));
  sqlite3_reset(stmt_);
  throw_storage_error(db_, code, what, message);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() { sqlite3_reset(stmt_); }

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text ? std::string(text, sqlite3_column_bytes(stmt_, column)) : std::string();
}

std::optional<double> Statement::column_optional_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_double(column);
}

}  // namespace tune::storage
