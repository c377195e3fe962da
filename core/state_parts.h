// A saved state in parts, so that a state that grows with the sweep (ASHA's
// rungs hold a value of every trial) is written by what changed since the
// last save rather than whole: a head, the state with some arrays left
// empty, and chunks of those arrays' items. The store keeps each chunk
// under a key of its own (storage/experiment_store.h) and gives the state
// back assembled; a reader never sees the parts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"

namespace tune::core {

struct StateChunk {
  std::string pointer;  // JSON pointer of the array in the head, e.g. "/brackets/0/1/recorded"
  int64_t index = 0;    // 0, 1, ...: the chunks of one array in order
  Json items;           // a JSON array: the array's next items
};

struct StateParts {
  Json head;
  // The chunks changed since the previous save (a partial last chunk is
  // given again until it is full), or, with `complete`, every chunk: then
  // the ones stored before are dropped.
  std::vector<StateChunk> chunks;
  bool complete = true;
};

// `head` with each chunk's items appended to the array at its pointer, the
// chunks of an array in index order: the state saved whole. Throws Error
// when a pointer names no array (Json's out_of_range when it names nothing).
Json assemble_state(Json head, std::vector<StateChunk> chunks);

}  // namespace tune::core

namespace tune {
using core::StateChunk;
using core::StateParts;
}  // namespace tune
