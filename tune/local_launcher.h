// LocalLauncher: ranks as child processes of the controller on this machine
// (posix_spawn, tune/process.h), one process group per trial so that a
// signal reaches every rank and what it started (a command trainable's own
// children), exits watched through pidfds.
#pragma once

#include "tune/launcher.h"

namespace tune {

class LocalLauncher final : public Launcher {
 public:
  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
};

}  // namespace tune
