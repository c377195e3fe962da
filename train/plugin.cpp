#include "train/plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <set>

#include "core/errors.h"

namespace train {

void load_trainable_library(const std::filesystem::path& path) {
  static std::set<std::string> loaded;
  const std::string key = std::filesystem::absolute(path).string();
  if (loaded.contains(key)) return;
  void* handle = dlopen(key.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    throw tune::Error(fmt::format("cannot load trainable library {}: {}", key, dlerror()));
  }
  auto* register_all = reinterpret_cast<void (*)()>(dlsym(handle, kRegisterSymbol));
  if (register_all == nullptr) {
    throw tune::Error(
        fmt::format("trainable library {} defines no extern \"C\" {}()", key, kRegisterSymbol));
  }
  register_all();
  loaded.insert(key);
}

std::optional<std::string> builtin_plugin_library(const std::string& name) {
  // From train/builtin_plugins.txt, which scripts/tunerun reads too.
  static const std::map<std::string, std::string> kPlugins = {
#include "train/builtin_plugins.inc"
  };
  auto it = kPlugins.find(name);
  if (it == kPlugins.end()) return std::nullopt;
  return it->second;
}

std::vector<std::filesystem::path> builtin_plugin_candidates(
    const std::string& library, const std::filesystem::path& executable) {
  const auto dir = executable.parent_path();
  return {dir / library, (dir / TUNERUN_PLUGIN_DIR_FROM_BIN / library).lexically_normal()};
}

}  // namespace train
