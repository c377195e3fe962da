// KeyedLauncher: a CURVE keypair of its own for every rank the controller
// launches (trial groups and spare groups alike). It wraps the launcher that
// starts the processes: for each group it makes one keypair per rank, writes
// it (mode 0600, train::write_keypair) to group_<n>/rank_<r>.key in the run's
// key folder (mode 0700, tune/channel/router.h), admits its public key on
// the control channel for that rank alone (its HELLO must name that trial,
// attempt and rank), and tells the ranks where their files are through
// train::kEnvCurveKeyFile, "%t" standing for the rank as in srun's --output.
// When the group is gone (its LaunchedGroup destroyed: killed, or ended and
// not kept), its keys are revoked and its files removed. A kept group keeps
// its keys and its connections for the trials it runs next.
//
// A file rather than the environment: the tasks of a Slurm job step share
// one environment (every rank would see every rank's secret), and what a
// rank starts inherits its environment; a file is read by the worker
// runtime alone.
//
// Called from the controller's event loop, as every Launcher.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tune/channel/router.h"
#include "tune/launch/launcher.h"

namespace tune {

class KeyedLauncher final : public Launcher {
 public:
  // `inner` starts the ranks; keys go under `dir` and are admitted on
  // `channel`. Both must outlive every group launched.
  KeyedLauncher(Launcher& inner, ControlChannel& channel, std::filesystem::path dir)
      : inner_(inner), channel_(channel), dir_(std::move(dir)) {}

  // Throws what the inner launcher throws (nothing of the group's keys stays
  // admitted then), or StorageError naming a key file it could not write.
  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;

  std::optional<double> total_cpus() const override { return inner_.total_cpus(); }
  std::optional<int> total_gpus() const override { return inner_.total_gpus(); }
  bool can_place(const Resources& per_rank) const override { return inner_.can_place(per_rank); }
  int max_ranks(const Resources& per_rank) const override { return inner_.max_ranks(per_rank); }
  bool keeps_idle_groups() const override { return inner_.keeps_idle_groups(); }
  std::vector<std::string> take_notices() override { return inner_.take_notices(); }
  void check_storage(const std::filesystem::path& experiment_dir) override {
    inner_.check_storage(experiment_dir);
  }
  Json describe_nodes() const override { return inner_.describe_nodes(); }
  void poll() override { inner_.poll(); }
  void restore_nodes(const Json& nodes) override { inner_.restore_nodes(nodes); }

 private:
  Launcher& inner_;
  ControlChannel& channel_;
  std::filesystem::path dir_;
  int64_t launches_ = 0;  // names each group's folder
};

}  // namespace tune
