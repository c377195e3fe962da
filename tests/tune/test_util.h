// Helpers shared by the tune and train tests: a scratch directory removed at
// the end, running the tunerun binary or a fixture program as a user would,
// and waiting for a condition with a deadline (a test waits for what it
// needs, never a fixed time).
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

// Whether `condition` holds within `seconds`: polled at first every
// millisecond, then less often (up to every 100 ms), so that a condition
// met at once costs nothing and a costly one (a query, a scan of /proc) is
// not run in a tight loop. Checked once more at the deadline.
template <class F>
bool eventually(F condition, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto pause = std::chrono::milliseconds(1);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  return condition();
}

// Pids of processes whose environment holds `needle` (e.g. a trial id
// prefix), and `also` when given.
inline std::vector<int> processes_with_env(const std::string& needle,
                                           const std::string& also = "") {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(needle) != std::string::npos && env.find(also) != std::string::npos) {
      pids.push_back(std::stoi(name));
    }
  }
  return pids;
}

}  // namespace tune::test
