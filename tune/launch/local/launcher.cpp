#include "tune/launch/local/launcher.h"

#include <fmt/format.h>

#include <csignal>
#include <thread>

#include "core/errors.h"

namespace tune {
namespace {

class LocalGroup final : public LaunchedGroup {
 public:
  ~LocalGroup() override {
    // A group dropped while alive must not leave orphans.
    if (!all_exited()) kill_and_wait();
  }

  void add(ChildProcess process) {
    if (children_.empty()) process_group_ = process.pid();
    children_.push_back(std::move(process));
  }

  int size() const override { return static_cast<int>(children_.size()); }
  int64_t pid(int rank) const override { return children_.at(rank).pid(); }

  std::vector<int> exit_fds() const override {
    std::vector<int> fds;
    for (const auto& c : children_) {
      if (!c.exit_status()) fds.push_back(c.pidfd());
    }
    return fds;
  }

  std::vector<RankExit> reap() override {
    std::vector<RankExit> exits;
    for (size_t r = 0; r < children_.size(); ++r) {
      if (children_[r].exit_status()) continue;
      if (auto status = children_[r].try_reap()) exits.push_back({static_cast<int>(r), *status});
    }
    return exits;
  }

  const std::optional<ExitStatus>& exit_status(int rank) const override {
    return children_.at(rank).exit_status();
  }

  void signal(int signal) override { signal_process_group(process_group_, signal); }

  void kill_and_wait() override {
    signal(SIGKILL);
    for (auto& c : children_) {
      while (!c.exit_status() && !c.try_reap()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  pid_t process_group() const { return process_group_; }

 private:
  std::vector<ChildProcess> children_;
  pid_t process_group_ = 0;
};

}  // namespace

std::unique_ptr<LaunchedGroup> LocalLauncher::launch(const GroupLaunch& launch) {
  auto group = std::make_unique<LocalGroup>();
  for (const auto& rank : launch.ranks) {
    SpawnOptions spawn{launch.argv, launch.env, rank.log_file, group->process_group(),
                       launch.working_dir};
    spawn.env.insert(spawn.env.end(), rank.env.begin(), rank.env.end());
    group->add(start_rank(spawn));  // on a throw, ~LocalGroup kills the ranks started
  }
  return group;
}

bool LocalLauncher::can_place(const Resources& per_rank) const {
  if (per_rank.placement_strategy == PlacementStrategy::kStrictSpread && per_rank.num_workers > 1) {
    throw ConfigError::at_key(
        "trainable.placement_strategy",
        fmt::format("placement_strategy STRICT_SPREAD puts each of the {} ranks on a node of its "
                    "own, but the local launcher has one node (this machine); choose PACK or "
                    "SPREAD, or run inside a Slurm allocation",
                    per_rank.num_workers));
  }
  return true;
}

}  // namespace tune
