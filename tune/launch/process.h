// Child processes of the controller: started with posix_spawn, watched
// through a pidfd (readable when the child exits, so the event loop polls
// exits next to its socket, with no SIGCHLD handler), killed by process group
// so that no rank of a trial outlives its group.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tune {

struct SpawnOptions {
  std::vector<std::string> argv;      // argv[0] is the executable path
  std::vector<std::string> env;       // "NAME=value", the whole environment
  std::filesystem::path log_file;     // stdout and stderr, appended
  pid_t process_group = 0;            // 0: lead a new group; else join this one
  std::filesystem::path working_dir;  // empty: the parent's
  int stdin_fd = -1;                  // the child's stdin (dup'd); -1: /dev/null
};

// How a child ended.
struct ExitStatus {
  int code = 0;    // exit code when !signaled
  int signal = 0;  // terminating signal when signaled
  bool signaled = false;

  bool ok() const { return !signaled && code == 0; }
  std::string describe() const;  // "exited with code 1", "killed by signal 9 (Killed)"
};

class ChildProcess {
 public:
  // Starts the child. Throws tune::Error naming the executable on failure.
  static ChildProcess spawn(const SpawnOptions& options);
  // Watches `pid`, a child of this process that someone else started (one
  // re-parented here, e.g. by a child subreaper). Throws tune::Error if it
  // cannot be watched (no such process).
  static ChildProcess adopt(pid_t pid);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();  // closes the pidfd; does not kill (the owner decides)

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_; }  // readable once the child has exited

  // Reaps the child if it has exited; nullopt while it runs.
  std::optional<ExitStatus> try_reap();
  const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  ChildProcess(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}

  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<ExitStatus> status_;
};

// Sends `signal` to every process of group `pgid`; a group already gone is
// not an error.
void signal_process_group(pid_t pgid, int signal);

}  // namespace tune
