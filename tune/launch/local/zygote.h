// ZygoteLauncher: fresh Python ranks forked from a pre-started interpreter
// (tunerun/_zygote.py) instead of each starting python3 and importing
// tunerun, which costs several times a whole C++ trial.
//
// How the ranks stay the controller's children: this process becomes a
// child subreaper (PR_SET_CHILD_SUBREAPER) for the launcher's lifetime; the
// zygote forks an intermediate process that forks the rank and exits, so
// the kernel re-parents the rank here. Then it is watched, reaped and killed
// by process group exactly as a rank started by posix_spawn (LocalLauncher):
// same pid in HELLO, same exit statuses, same kill_and_wait.
//
// What being a subreaper changes, and how it is contained: a process left
// behind by a rank (a DataLoader worker of a crashed rank) is re-parented
// here rather than to init. Once all ranks of a group are reaped, the
// processes of that group's process group that were re-parented here are
// reaped (waitid(P_PGID)), then and at every later launch while any is
// left; never another pid, so the caller's own children are not touched.
// A process that left its rank's group (setsid) stays a zombie here once
// it exits, until this process ends. The previous
// subreaper setting is restored when the launcher is destroyed.
//
// Ranks whose argv is not `worker_argv`, and every rank once the zygote has
// died or failed a request, start by exec as before (LocalLauncher).
// Called from the controller's event loop only, like every launcher.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tune/launch/local/launcher.h"

namespace tune {

class ZygoteLauncher final : public LocalLauncher {
 public:
  // `zygote_argv` starts the zygote (lazily, at the first launch).
  ZygoteLauncher(std::vector<std::string> zygote_argv, std::vector<std::string> worker_argv);
  ~ZygoteLauncher() override;
  ZygoteLauncher(const ZygoteLauncher&) = delete;
  ZygoteLauncher& operator=(const ZygoteLauncher&) = delete;

  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
  struct Leftovers;  // process groups to sweep (zygote.cpp)
  // Says once, for the run log, that the zygote failed and why.
  std::vector<std::string> take_notices() override { return std::exchange(notices_, {}); }

 protected:
  ChildProcess start_rank(const SpawnOptions& options) override;

 private:
  bool ensure_zygote();
  std::optional<pid_t> fork_rank(const SpawnOptions& options);  // nullopt: not by the zygote
  void give_up(const std::string& why);  // kills the zygote; exec from now on
  void stop_zygote(bool kill);

  std::vector<std::string> zygote_argv_;
  std::vector<std::string> worker_argv_;
  int previous_subreaper_ = 0;
  bool subreaper_ = false;
  pid_t zygote_pid_ = -1;
  int socket_ = -1;
  bool given_up_ = false;  // the zygote died or failed: exec from now on
  std::vector<std::string> notices_;
  std::shared_ptr<Leftovers> leftovers_;
};

}  // namespace tune
