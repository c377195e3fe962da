#include "tune/channel/rank_keys.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "train/channel_keys.h"
#include "train/worker_env.h"

namespace tune {
namespace {

// The keys of one group's ranks: admitted while it lives.
class GroupKeys {
 public:
  GroupKeys(ControlChannel& channel, std::filesystem::path dir)
      : channel_(channel), dir_(std::move(dir)) {}
  ~GroupKeys() {
    for (const auto& key : public_keys_) channel_.revoke(key);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  GroupKeys(const GroupKeys&) = delete;
  GroupKeys& operator=(const GroupKeys&) = delete;

  // Makes, writes and admits rank `rank`'s keypair.
  void issue(const GroupLaunch& launch, int rank) {
    const train::CurveKeypair keys = train::make_curve_keypair();
    train::write_keypair(dir_ / fmt::format("rank_{}.key", rank), keys);
    public_keys_.push_back(keys.public_key);
    channel_.admit(keys.public_key, launch.trial_id, launch.attempt, rank);
  }

 private:
  ControlChannel& channel_;
  std::filesystem::path dir_;
  std::vector<std::string> public_keys_;
};

// A launched group that takes its ranks' keys along when it goes.
class KeyedGroup final : public LaunchedGroup {
 public:
  KeyedGroup(std::unique_ptr<GroupKeys> keys, std::unique_ptr<LaunchedGroup> inner)
      : keys_(std::move(keys)), inner_(std::move(inner)) {}

  int size() const override { return inner_->size(); }
  int64_t pid(int rank) const override { return inner_->pid(rank); }
  std::vector<int> exit_fds() const override { return inner_->exit_fds(); }
  std::vector<RankExit> reap() override { return inner_->reap(); }
  const std::optional<ExitStatus>& exit_status(int rank) const override {
    return inner_->exit_status(rank);
  }
  void signal(int signal) override { inner_->signal(signal); }
  void kill_and_wait() override { inner_->kill_and_wait(); }
  std::string node_failure() const override { return inner_->node_failure(); }
  bool nodes_decided() const override { return inner_->nodes_decided(); }
  std::string held_reason() override { return inner_->held_reason(); }
  void started() override { inner_->started(); }

 private:
  std::unique_ptr<GroupKeys> keys_;
  std::unique_ptr<LaunchedGroup> inner_;  // after keys_: the processes go before their keys
};

}  // namespace

std::unique_ptr<LaunchedGroup> KeyedLauncher::launch(const GroupLaunch& launch) {
  const auto dir = dir_ / fmt::format("group_{}", ++launches_);
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);  // its secrets' folder
  auto keys = std::make_unique<GroupKeys>(channel_, dir);
  for (int rank = 0; rank < static_cast<int>(launch.ranks.size()); ++rank) {
    keys->issue(launch, rank);
  }
  GroupLaunch keyed = launch;
  keyed.env.push_back(
      fmt::format("{}={}", train::kEnvCurveKeyFile, (dir / "rank_%t.key").string()));
  auto group = inner_.launch(keyed);  // on a throw, ~GroupKeys revokes the keys
  return std::make_unique<KeyedGroup>(std::move(keys), std::move(group));
}

}  // namespace tune
