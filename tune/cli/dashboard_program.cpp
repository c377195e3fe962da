#include "tune/cli/dashboard_program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "train/plugin.h"
#include "tune/cli/commands.h"
#include "tune/system/executable.h"

namespace tune::cli {

void exec_dashboard_program(const std::string& command, const std::vector<std::string>& args) {
  std::vector<std::string> looked;
  for (const auto& path :
       train::builtin_plugin_candidates("tunerun-dashboard", self_executable())) {
    if (access(path.c_str(), X_OK) != 0) {
      looked.push_back(path.string());
      continue;
    }
    std::vector<std::string> words = {path.string(), command};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    execv(path.c_str(), argv.data());
    fmt::print(stderr, "error: cannot run {}: {}\n", path.string(), std::strerror(errno));
    throw ExitRequest{kExitInternal};
  }
  fmt::print(stderr,
             "error: `tunerun {}` runs tunerun-dashboard, which this build lacks (looked in {}); "
             "`scripts/tunerun {} ...` or scripts/build.sh builds it\n",
             command, fmt::join(looked, ", "), command);
  throw ExitRequest{kExitInternal};
}

}  // namespace tune::cli
