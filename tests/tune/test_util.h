// Helpers shared by the tune and train tests: a scratch directory removed at
// the end, and running the tunerun binary or a fixture program as a user would.
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

// Runs `command` in a shell.
inline CommandResult run_shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Runs `tunerun ARGS` in `cwd`.
inline CommandResult run_tunerun(const std::string& args, const std::filesystem::path& cwd) {
  return run_shell("cd '" + cwd.string() + "' && '" + std::string(TUNERUN_BINARY) + "' " + args);
}

// The text after "RESULT_JSON " up to the end of its line, which the fixture
// programs print; empty when there is none.
inline std::string result_json_text(const std::string& output) {
  const auto at = output.find("RESULT_JSON ");
  if (at == std::string::npos) return "";
  return output.substr(at + 12, output.find('\n', at) - at - 12);
}

}  // namespace tune::test
