#include "core/state_parts.h"

#include <algorithm>

#include "core/errors.h"

namespace tune::core {

Json assemble_state(Json head, std::vector<StateChunk> chunks) {
  std::stable_sort(chunks.begin(), chunks.end(), [](const StateChunk& a, const StateChunk& b) {
    return a.pointer != b.pointer ? a.pointer < b.pointer : a.index < b.index;
  });
  for (StateChunk& chunk : chunks) {
    Json& array = head.at(Json::json_pointer(chunk.pointer));
    if (!array.is_array()) throw Error("saved state: " + chunk.pointer + " is not an array");
    for (Json& item : chunk.items) array.push_back(std::move(item));
  }
  return head;
}

}  // namespace tune::core
