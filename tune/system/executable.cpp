#include "tune/system/executable.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "core/errors.h"
#include "train/plugin.h"

namespace tune {

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot resolve /proc/self/exe: " + ec.message());
  return path.string();
}

std::string find_program(const std::string& name, const std::string& worker_argv0,
                         const std::vector<std::string>& program_dirs,
                         std::vector<std::string>& looked) {
  std::vector<std::filesystem::path> candidates;
  for (const std::string& dir : program_dirs) {
    candidates.push_back((std::filesystem::path(dir) / name).lexically_normal());
  }
  for (const std::string& beside : {worker_argv0, self_executable()}) {
    for (auto& path : train::builtin_plugin_candidates(name, beside)) candidates.push_back(path);
  }
  for (const auto& path : candidates) {
    if (access(path.c_str(), X_OK) == 0) return std::filesystem::absolute(path).string();
    looked.push_back(path.string());
  }
  return {};
}

}  // namespace tune
