// Helpers shared by the tune tests: a scratch directory removed at the end,
// and running the tunerun binary as a user would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>

namespace tune::test {

class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("tunerun_test_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    auto file = path_ / name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `tunerun ARGS` in `cwd`.
inline CommandResult run_tunerun(const std::string& args, const std::filesystem::path& cwd) {
  const std::string cmd =
      "cd '" + cwd.string() + "' && '" + std::string(TUNERUN_BINARY) + "' " + args + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace tune::test
