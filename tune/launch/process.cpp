#include "tune/launch/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "core/errors.h"

namespace tune {
namespace {

int pidfd_open(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Owns posix_spawn's attribute and file-action objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

std::string ExitStatus::describe() const {
  if (signaled) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exited with code {}", code);
}

ChildProcess ChildProcess::spawn(const SpawnOptions& options) {
  SpawnSetup setup;
  const std::string log = options.log_file.string();
  if (options.stdin_fd >= 0) {
    posix_spawn_file_actions_adddup2(&setup.actions, options.stdin_fd, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&setup.actions, STDOUT_FILENO, STDERR_FILENO);
  const std::string cwd = options.working_dir.string();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&setup.actions, cwd.c_str());
  // The controller blocks no signals, but its caller might have: workers
  // start with the default mask and dispositions.
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&setup.attr, &empty);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
  posix_spawnattr_setpgroup(&setup.attr, options.process_group);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  auto argv = c_strings(options.argv);
  auto envp = c_strings(options.env);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc != 0) {
    throw Error(fmt::format("cannot start worker '{}': {}", options.argv[0], strerror(rc)));
  }
  return adopt(pid);
}

ChildProcess ChildProcess::adopt(pid_t pid) {
  int fd = pidfd_open(pid);
  if (fd < 0) {
    const int err = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    throw Error(fmt::format("pidfd_open failed for worker {}: {}", pid, strerror(err)));
  }
  return ChildProcess(pid, fd);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), pidfd_(other.pidfd_), status_(other.status_) {
  other.pid_ = -1;
  other.pidfd_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pidfd_ >= 0) close(pidfd_);
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    status_ = other.status_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pidfd_ >= 0) close(pidfd_);
}

std::optional<ExitStatus> ChildProcess::try_reap() {
  if (status_ || pid_ < 0) return status_;
  int raw = 0;
  pid_t r = waitpid(pid_, &raw, WNOHANG);
  if (r != pid_) return std::nullopt;
  ExitStatus status;
  if (WIFSIGNALED(raw)) {
    status.signaled = true;
    status.signal = WTERMSIG(raw);
  } else {
    status.code = WEXITSTATUS(raw);
  }
  status_ = status;
  return status_;
}

void signal_process_group(pid_t pgid, int signal) {
  if (pgid > 0) kill(-pgid, signal);
}

}  // namespace tune
