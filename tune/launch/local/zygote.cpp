#include "tune/launch/local/zygote.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

extern char** environ;

namespace tune {
namespace {

// A fork of the zygote takes a few ms; under heavy load much longer. Past
// this the zygote counts as stuck: killed, and ranks start by exec.
constexpr int kReplyTimeoutMs = 30000;
constexpr int kZygoteFd = 3;  // where _zygote.py expects its socket

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, char* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, kReplyTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = read(fd, out + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string frame(const std::string& payload) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + payload;
}

// Reaps the processes of group `pgid` that were re-parented here (children of
// this process in that group); waits up to `wait_s` for those still dying.
// Returns false once the group has no child of this process left. Only
// called once every rank of the group is reaped, so no rank's status is
// taken from its ChildProcess; a group id cannot be reused while a process
// of the group, zombie or not, is left.
bool reap_orphans(pid_t pgid, double wait_s) {
  if (pgid <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    siginfo_t info{};
    if (waitid(P_PGID, static_cast<id_t>(pgid), &info, WEXITED | WNOHANG) != 0) return false;
    if (info.si_pid != 0) continue;  // reaped one; look again
    if (std::chrono::steady_clock::now() >= deadline) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

// The groups that ended with processes of theirs still running (they may be
// re-parented here and exit later), swept at every launch; shared by the
// launcher and its groups, whichever goes first.
struct ZygoteLauncher::Leftovers {
  std::vector<pid_t> groups;
  void sweep() {
    std::erase_if(groups, [](pid_t pgid) { return !reap_orphans(pgid, 0.0); });
  }
};

namespace {

// A group whose process group is swept of re-parented processes once all
// its ranks are gone; everything else is the local group's.
class SweptGroup final : public LaunchedGroup {
 public:
  SweptGroup(std::unique_ptr<LaunchedGroup> group,
             std::shared_ptr<ZygoteLauncher::Leftovers> leftovers)
      : group_(std::move(group)),
        pgid_(group_->size() > 0 ? group_->pid(0) : 0),
        leftovers_(std::move(leftovers)) {}
  ~SweptGroup() override {
    const bool killed = !group_->all_exited();
    group_.reset();  // kills and reaps the ranks still running
    if (reap_orphans(pgid_, killed ? 1.0 : 0.0)) leftovers_->groups.push_back(pgid_);
  }

  int size() const override { return group_->size(); }
  int64_t pid(int rank) const override { return group_->pid(rank); }
  std::vector<int> exit_fds() const override { return group_->exit_fds(); }
  std::vector<RankExit> reap() override {
    auto exits = group_->reap();
    if (!exits.empty() && group_->all_exited()) reap_orphans(pgid_, 0.0);
    return exits;
  }
  const std::optional<ExitStatus>& exit_status(int rank) const override {
    return group_->exit_status(rank);
  }
  void signal(int signal) override { group_->signal(signal); }
  void kill_and_wait() override {
    group_->kill_and_wait();
    reap_orphans(pgid_, 1.0);  // the group's other processes got the SIGKILL too
  }

 private:
  std::unique_ptr<LaunchedGroup> group_;
  pid_t pgid_;
  std::shared_ptr<ZygoteLauncher::Leftovers> leftovers_;
};

}  // namespace

ZygoteLauncher::ZygoteLauncher(std::vector<std::string> zygote_argv,
                               std::vector<std::string> worker_argv)
    : zygote_argv_(std::move(zygote_argv)),
      worker_argv_(std::move(worker_argv)),
      leftovers_(std::make_shared<Leftovers>()) {}

ZygoteLauncher::~ZygoteLauncher() {
  stop_zygote(false);
  leftovers_->sweep();
  if (subreaper_) prctl(PR_SET_CHILD_SUBREAPER, previous_subreaper_, 0, 0, 0);
}

std::unique_ptr<LaunchedGroup> ZygoteLauncher::launch(const GroupLaunch& launch) {
  leftovers_->sweep();
  return std::make_unique<SweptGroup>(LocalLauncher::launch(launch), leftovers_);
}

ChildProcess ZygoteLauncher::start_rank(const SpawnOptions& options) {
  if (auto pid = fork_rank(options)) {
    // The intermediate set the group too; repeated here for the case where
    // neither ran yet when a signal is sent (harmless if it is set).
    setpgid(*pid, options.process_group == 0 ? *pid : options.process_group);
    return ChildProcess::adopt(*pid);
  }
  return ChildProcess::spawn(options);
}

bool ZygoteLauncher::ensure_zygote() {
  if (given_up_) return false;
  if (socket_ >= 0) return true;
  if (!subreaper_) {
    prctl(PR_GET_CHILD_SUBREAPER, reinterpret_cast<unsigned long>(&previous_subreaper_), 0, 0, 0);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
      give_up(fmt::format("cannot become a child subreaper: {}", strerror(errno)));
      return false;
    }
    subreaper_ = true;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    give_up(fmt::format("socketpair: {}", strerror(errno)));
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Not the driver's terminal: a rank's stdout then buffers as an exec'd one's.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kZygoteFd);  // clears close-on-exec
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  // Its own process group: a Ctrl-C at the terminal is the driver's to
  // handle (it pauses the trials), not a KeyboardInterrupt in the zygote.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> argv;
  for (auto& a : zygote_argv_) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    give_up(fmt::format("cannot start {}: {}", zygote_argv_[0], strerror(rc)));
    return false;
  }
  zygote_pid_ = pid;
  socket_ = fds[0];
  return true;
}

std::optional<pid_t> ZygoteLauncher::fork_rank(const SpawnOptions& options) {
  if (options.argv != worker_argv_) return std::nullopt;  // not a Python rank of this fit()
  if (!ensure_zygote()) return std::nullopt;
  // NUL-separated: cwd, log, group, argc, argv..., env... (_zygote._launch).
  // No working_dir means this process's, now (the zygote's may differ).
  std::error_code no_cwd;
  std::string request = options.working_dir.empty() ? std::filesystem::current_path(no_cwd).string()
                                                    : options.working_dir.string();
  for (const std::string& field : {options.log_file.string(), std::to_string(options.process_group),
                                   std::to_string(options.argv.size())}) {
    request += '\0';
    request += field;
  }
  for (const auto* list : {&options.argv, &options.env}) {
    for (const auto& field : *list) {
      request += '\0';
      request += field;
    }
  }
  unsigned char header[4];
  std::string reply;
  if (!write_all(socket_, frame(request)) ||
      !read_all(socket_, reinterpret_cast<char*>(header), 4)) {
    give_up("the zygote did not answer (it died or is stuck)");
    return std::nullopt;
  }
  reply.resize(header[0] | header[1] << 8 | header[2] << 16 | uint32_t{header[3]} << 24);
  if (!read_all(socket_, reply.data(), reply.size())) {
    give_up("the zygote did not answer (it died or is stuck)");
    return std::nullopt;
  }
  pid_t pid = 0;
  auto [end, error] = std::from_chars(reply.data(), reply.data() + reply.size(), pid);
  if (error != std::errc() || end != reply.data() + reply.size() || pid <= 0) {
    // A zygote that cannot fork one rank is not trusted with the next.
    give_up(reply);
    return std::nullopt;
  }
  return pid;
}

void ZygoteLauncher::give_up(const std::string& why) {
  stop_zygote(true);
  given_up_ = true;
  notices_.push_back(
      fmt::format("warning: Python ranks start by exec from now on (the zygote: {})", why));
}

void ZygoteLauncher::stop_zygote(bool kill) {
  if (socket_ >= 0) close(socket_);  // the zygote exits at EOF
  socket_ = -1;
  if (zygote_pid_ > 0) {
    if (kill) ::kill(zygote_pid_, SIGKILL);
    waitpid(zygote_pid_, nullptr, 0);
  }
  zygote_pid_ = -1;
}

}  // namespace tune
