// A local Slurm cluster for the tests (tests/slurm/local_cluster.sh), up for
// a LocalCluster's lifetime, and what the cluster cases share.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../tune/sqlite_query.h"
#include "../tune/test_util.h"

namespace tune::test {

inline const std::string kCluster =
    std::string(TUNERUN_SOURCE_DIR) + "/tests/slurm/local_cluster.sh";

// What each node of a LocalCluster has.
struct ClusterNodes {
  int nodes = 2;           // TUNERUN_SLURM_NODES
  int cpus = 2;            // TUNERUN_SLURM_CPUS
  int gpus = 0;            // TUNERUN_SLURM_GPUS: stand-in devices in gres.conf, nothing behind them
  int slurmd_timeout = 5;  // TUNERUN_SLURMD_TIMEOUT: s before Slurm declares a silent node down
};

// Up for the object's lifetime; down at its end, even when a check failed.
class LocalCluster {
 public:
  explicit LocalCluster(const ClusterNodes& nodes = {}) {
    auto probe = run_shell("'" + kCluster + "' can_run");
    if (probe.exit_code != 0) {
      skip_reason_ = probe.output;
      return;
    }
    auto up =
        run_shell(fmt::format("TUNERUN_SLURM_NODES={} TUNERUN_SLURM_CPUS={} TUNERUN_SLURM_GPUS={} "
                              "TUNERUN_SLURMD_TIMEOUT={} '{}' up",
                              nodes.nodes, nodes.cpus, nodes.gpus, nodes.slurmd_timeout, kCluster));
    INFO(up.output);
    REQUIRE(up.exit_code == 0);
    up_ = true;
  }
  ~LocalCluster() {
    if (up_) run_shell("'" + kCluster + "' down");
  }
  bool skipped() const {
    if (!up_) MESSAGE("skipped: no local Slurm cluster on this machine: " << skip_reason_);
    return !up_;
  }
  // Runs `tunerun ARGS` inside a 2-node allocation holding every CPU of both nodes.
  CommandResult tunerun_in_allocation(const std::string& args,
                                      const std::filesystem::path& cwd) const {
    return run_shell("cd '" + cwd.string() + "' && " + tunerun_command(args));
  }
  // The shell command that runs `tunerun ARGS` so, from the case's directory,
  // in an allocation of `nodes` nodes that survives a node's death
  // (--no-kill). `address`: pass --control-address (else the sweep file's
  // [cluster] must say it).
  static std::string tunerun_command(const std::string& args, bool address = true, int nodes = 2) {
    return in_allocation("'" + std::string(TUNERUN_BINARY) + "' " + args +
                             (address ? " --control-address 198.18.0.1" : "") + " -q",
                         nodes);
  }
  // The shell command that runs `command` in a new allocation of `nodes`
  // whole nodes that survives a node's death (--no-kill).
  static std::string in_allocation(const std::string& command, int nodes = 2) {
    return "'" + kCluster + "' run salloc --nodes=" + std::to_string(nodes) +
           " --exclusive --no-kill --quiet " + command;
  }
  // `local_cluster.sh ARGS` (exec, crash...).
  static CommandResult cluster(const std::string& args) {
    return run_shell("'" + kCluster + "' " + args);
  }

 private:
  bool up_ = false;
  std::string skip_reason_;
};

inline std::string sweep(const std::string& name, const std::string& trainable,
                         const std::string& params) {
  return "name = \"" + name + "\"\nmetric = \"accuracy\"\nmode = \"max\"\n\n[trainable]\n" +
         "builtin = \"learning_curve\"\n" + trainable + "\n[param_space]\n" + params + "\n";
}

// The hosts each trial's ranks ran on, from the placements table.
inline std::map<std::string, std::set<std::string>> hosts_per_trial(
    const std::filesystem::path& db) {
  std::map<std::string, std::set<std::string>> hosts;
  for (const auto& row : query(db, "SELECT trial_id, host FROM placements")) {
    hosts[row[0]].insert(row[1]);
  }
  return hosts;
}

// What `file` holds; empty when it cannot be read.
inline std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Starts `command` (a shell command run from `dir`) in the background:
// its output goes to dir/tunerun.log, its exit code to dir/exit_code.
inline void start_in_background(const ScratchDir& dir, const std::string& command) {
  run_shell("cd '" + dir.path().string() + "' && (" + command +
            " >tunerun.log 2>&1; echo $? > exit_code) >/dev/null 2>&1 &");
}

// The pid a case's script wrote to dir/controller.pid (`& echo \$! >
// controller.pid`); 0 when there is none.
inline int controller_pid(const ScratchDir& dir) {
  int pid = 0;
  std::ifstream(dir.path() / "controller.pid") >> pid;
  return pid;
}

// The background command's exit code once it exited within `seconds`; -1 if not.
inline int exit_code_within(const ScratchDir& dir, double seconds) {
  if (!eventually([&] { return std::filesystem::exists(dir.path() / "exit_code"); }, seconds)) {
    return -1;
  }
  int code = -1;
  eventually(
      [&] {
        std::ifstream(dir.path() / "exit_code") >> code;
        return code != -1;
      },
      5);
  return code;
}

// Whether `db` holds at least `n` results.
inline bool holds_results(const std::filesystem::path& db, int n) {
  return std::filesystem::exists(db) &&
         query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'results'")[0][0] == "1" &&
         std::stoi(query(db, "SELECT count(*) FROM results")[0][0]) >= n;
}

}  // namespace tune::test
