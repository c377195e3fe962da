// SignalPipe: turns SIGINT and SIGTERM into a readable file descriptor, so
// the controller's event loop sees them between two turns instead of in a
// handler. Installs its handlers on construction and restores the previous
// ones on destruction. One instance at a time per process.
#pragma once

namespace tune {

class SignalPipe {
 public:
  SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;
  ~SignalPipe();

  int fd() const;  // readable after a signal
  // Signals received since the last call (drains the pipe).
  int take();
};

}  // namespace tune
