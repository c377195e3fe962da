// The experiment_state values, written whole or in parts and read back assembled.
#include "storage/saved_state.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "storage/json_column.h"
#include "storage/statement.h"

namespace tune::storage {
namespace {

// A key's chunk rows sort between "<key>:" and "<key>;" (';' follows ':'),
// an array's chunks in index order (zero-padded).
std::string chunk_key(const std::string& key, const StateChunk& chunk) {
  return fmt::format("{}:{}:{:09d}", key, chunk.pointer, chunk.index);
}

Json parse_row(const std::string& text, const std::string& what, const std::string& key) {
  try {
    return decode_json_column(text, {});
  } catch (const Json::exception& e) {
    throw StorageError(
        fmt::format("{}: experiment_state {} is not valid JSON: {}", what, key, e.what()));
  }
}

}  // namespace

void write_saved_state(sqlite3* db, const std::string& key, const StateParts& parts, double at) {
  if (parts.complete) {
    Statement drop(db, "DELETE FROM experiment_state WHERE key > ?1 AND key < ?2");
    drop.bind(1, key + ":").bind(2, key + ";").run();
  }
  Statement put(db,
                "INSERT OR REPLACE INTO experiment_state (key, value, updated_at)"
                " VALUES (?1, ?2, ?3)");
  for (const StateChunk& chunk : parts.chunks) {
    put.bind(1, chunk_key(key, chunk)).bind(2, dump_json_text(chunk.items)).bind(3, at).run();
  }
  put.bind(1, key).bind(2, dump_json_text(parts.head)).bind(3, at).run();
}

std::optional<Json> read_saved_state(sqlite3* db, const std::string& key, const std::string& what) {
  Statement head(db, "SELECT value FROM experiment_state WHERE key = ?1");
  head.bind(1, key);
  if (!head.step()) return std::nullopt;
  Json value = parse_row(head.column_text(0), what, key);
  Statement rows(
      db, "SELECT key, value FROM experiment_state WHERE key > ?1 AND key < ?2 ORDER BY key");
  rows.bind(1, key + ":").bind(2, key + ";");
  std::vector<StateChunk> chunks;
  while (rows.step()) {
    const std::string name = rows.column_text(0);
    const size_t colon = name.rfind(':');
    chunks.push_back({name.substr(key.size() + 1, colon - key.size() - 1),
                      std::stoll(name.substr(colon + 1)),
                      parse_row(rows.column_text(1), what, name)});
  }
  if (chunks.empty()) return value;
  try {
    return core::assemble_state(std::move(value), std::move(chunks));
  } catch (const std::exception& e) {
    throw StorageError(fmt::format("{}: experiment_state {}: {}", what, key, e.what()));
  }
}

}  // namespace tune::storage
