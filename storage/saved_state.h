// The experiment_state table's values (the searcher's, the scheduler's and
// the controller's saved state, for `tunerun resume`), each stored whole
// under its key or in parts (core/state_parts.h): the head under the key,
// each chunk under "<key>:<pointer>:<index>". Readers get the value
// assembled, whichever way it was written.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>

#include "core/config.h"
#include "core/state_parts.h"

namespace tune::storage {

// Writes `parts` under `key` at time `at`: the head, and the chunks given
// (with parts.complete, after dropping every chunk stored before). The
// caller holds the write transaction.
void write_saved_state(sqlite3* db, const std::string& key, const StateParts& parts, double at);

// The value under `key` with its chunks appended; nullopt when there is
// none. Throws StorageError naming `what` when a row is not valid JSON.
std::optional<Json> read_saved_state(sqlite3* db, const std::string& key, const std::string& what);

}  // namespace tune::storage
