// libFuzzer target: the sweep-file loader must turn any text into either a
// spec or a ConfigError with a location, never crash. Run with
// scripts/fuzz.sh (clang, ASan, UBSan).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "train/builtins/builtins.h"
#include "tune/spec/sweep_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool registered = (train::register_builtin_trainables(), true);
  (void)registered;
  try {
    tune::parse_sweep(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml");
  } catch (const tune::ConfigError&) {
  }
  return 0;
}
