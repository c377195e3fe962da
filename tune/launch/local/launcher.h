// LocalLauncher: ranks as child processes of the controller on this machine
// (posix_spawn, tune/launch/process.h), one process group per trial so that a
// signal reaches every rank and what it started (a command trainable's own
// children), exits watched through pidfds.
#pragma once

#include "tune/launch/launcher.h"

namespace tune {

class LocalLauncher : public Launcher {
 public:
  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
  // This machine is one node: every strategy places every rank here but
  // STRICT_SPREAD, which cannot place two (ConfigError).
  bool can_place(const Resources& per_rank) const override;

 protected:
  // Starts one rank; a launcher that starts processes another way (a
  // pre-started zygote that forks them) overrides it and must return a child
  // of this process in `options.process_group`.
  virtual ChildProcess start_rank(const SpawnOptions& options) {
    return ChildProcess::spawn(options);
  }
};

}  // namespace tune
