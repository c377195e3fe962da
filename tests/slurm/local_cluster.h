// A local Slurm cluster for the tests (tests/slurm/local_cluster.sh), up for
// a LocalCluster's lifetime, and what the cluster cases share.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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
    return "'" + kCluster + "' run salloc --nodes=" + std::to_string(nodes) +
           " --exclusive --no-kill --quiet '" + std::string(TUNERUN_BINARY) + "' " + args +
           (address ? " --control-address 198.18.0.1" : "") + " -q";
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

template <class F>
bool eventually(F condition, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

}  // namespace tune::test
