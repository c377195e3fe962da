// libFuzzer target: the control-message decoder must reject any bytes with a
// ProtocolError, never crash, hang or allocate without bound. Run with
// scripts/fuzz.sh (clang, ASan, UBSan).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto message =
        tune::protocol::decode(std::string_view(reinterpret_cast<const char*>(data), size));
    // A message that decodes must survive a round trip unchanged.
    auto again = tune::protocol::decode(tune::protocol::encode(message));
    if (again.index() != message.index()) __builtin_trap();
  } catch (const tune::ProtocolError&) {
  }
  return 0;
}
