// A local cluster of SSH hosts for the tests (tests/ssh/local_cluster.sh), up
// for a LocalSshCluster's lifetime, and what the SSH cases share.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../tune/sqlite_query.h"
#include "../tune/test_util.h"

namespace tune::test {

inline const std::string kSshCluster =
    std::string(TUNERUN_SOURCE_DIR) + "/tests/ssh/local_cluster.sh";

// The host side of the cluster's bridge: the controller's address.
inline constexpr const char* kSshControlAddress = "198.18.0.129";

// Up for the object's lifetime; down at its end, even when a check failed.
class LocalSshCluster {
 public:
  explicit LocalSshCluster(int hosts = 3, int cpus = 2, int gpus = 0) {
    auto probe = run_shell("'" + kSshCluster + "' can_run");
    if (probe.exit_code != 0) {
      skip_reason_ = probe.output;
      return;
    }
    auto up = run_shell(
        fmt::format("TUNERUN_SSH_HOSTS={} TUNERUN_SSH_CPUS={} TUNERUN_SSH_GPUS={} '{}' up", hosts,
                    cpus, gpus, kSshCluster));
    INFO(up.output);
    REQUIRE(up.exit_code == 0);
    up_ = true;
  }
  ~LocalSshCluster() {
    if (up_) run_shell("'" + kSshCluster + "' down");
  }
  bool skipped() const {
    if (!up_) MESSAGE("skipped: no local SSH cluster on this machine: " << skip_reason_);
    return !up_;
  }
  // `local_cluster.sh ARGS` (crash, revive, exec...).
  static CommandResult cluster(const std::string& args) {
    return run_shell("'" + kSshCluster + "' " + args);
  }
  // [cluster] of a sweep on these hosts, `extra` lines appended.
  static std::string cluster_table(const std::string& extra = "") {
    auto path = [](const char* what) {
      std::string out = cluster(what).output;
      return out.substr(0, out.find('\n'));
    };
    return fmt::format(
        "\n[cluster]\nlauncher = \"ssh\"\nhostfile = \"{}\"\nssh_config = \"{}\"\n"
        "control_address = \"{}\"\n{}",
        path("hostfile"), path("ssh_config"), kSshControlAddress, extra);
  }

 private:
  bool up_ = false;
  std::string skip_reason_;
};

// A sweep of the built-in learning curve.
inline std::string ssh_sweep(const std::string& name, const std::string& trainable,
                             const std::string& params, const std::string& cluster_extra = "") {
  return "name = \"" + name + "\"\nmetric = \"accuracy\"\nmode = \"max\"\n\n[trainable]\n" +
         "builtin = \"learning_curve\"\n" + trainable + "\n[param_space]\n" + params + "\n" +
         LocalSshCluster::cluster_table(cluster_extra);
}

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Whether `table` exists in the experiment's database yet.
inline bool has_table(const std::filesystem::path& db, const std::string& table) {
  return std::filesystem::exists(db) &&
         query(db, "SELECT count(*) FROM sqlite_master WHERE name = '" + table + "'")[0][0] != "0";
}

// Starts `tunerun run SWEEP --storage-path runs` in `dir` in the background;
// its output goes to dir/tunerun.log, its exit code to dir/exit_code.
inline void start_tunerun(const std::filesystem::path& dir, const std::string& sweep) {
  run_shell("cd '" + dir.string() + "' && ('" + std::string(TUNERUN_BINARY) + "' run " + sweep +
            " --storage-path runs >tunerun.log 2>&1; echo $? > exit_code) >/dev/null 2>&1 &");
}

// The background run's exit code, once it ended within `seconds`; -1 if not.
inline int await_tunerun(const std::filesystem::path& dir, double seconds) {
  if (!eventually(
          [&] {
            return std::filesystem::exists(dir / "exit_code") &&
                   !read_text(dir / "exit_code").empty();
          },
          seconds)) {
    return -1;
  }
  return std::stoi(read_text(dir / "exit_code"));
}

// The processes on host `host` (its network namespace) but its sshd and
// the namespace's holder: what a run left behind there.
inline std::vector<std::string> leftovers_on(int host) {
  std::istringstream in(LocalSshCluster::cluster(fmt::format("procs {}", host)).output);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace tune::test
