// tunerun-ssh-rank: the remote end of one rank the SSH launcher starts
// (tune/launch/ssh/launcher.h). sshd runs it as the rank's command; it
// reads the rank from its stdin (the SSH channel), never from its command
// line, starts it, and stays its parent:
//
//   tunerun-ssh-rank 1\n                        the protocol's version
//   key <n>\n<n bytes>\n                        the rank's CURVE keypair file
//   cwd <n>\n<n bytes>\n                        where it starts (optional)
//   env <n>\n<n bytes>\n ...                    NAME=value over this host's own
//   arg <n>\n<n bytes>\n ...                    argv; argv[0] found on PATH
//   start\n
//   <signal number>\n ...                       signals for the rank's process group
//   (end of input)                              the controller or its connection
//                                               is gone: the rank is killed
//
// The keypair goes to a file of mode 0600 in a fresh folder of mode 0700
// under $TMPDIR (/tmp), named to the rank by TUNERUN_CURVE_KEY_FILE and
// removed when the rank ends. The rank leads a process group of its own,
// dies with this process (PR_SET_PDEATHSIG), and is told this process's
// pid as its parent (TUNERUN_PARENT_PID). The exit code is the rank's, or
// 128 + the signal that killed it (ssh keeps 255 for its own failures).
// Anything the rank started that outlives it is killed with its group.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr int kKillGraceS = 5;  // after SIGTERM, before SIGKILL, once the input ended

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "tunerun-ssh-rank: %s\n", what.c_str());
  std::exit(125);
}

// stdin, unbuffered beyond what one read returns (the signals come later).
struct Input {
  std::string buffer;
  bool eof = false;

  bool fill() {
    char chunk[4096];
    const ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) return true;
      eof = true;
      return false;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  }
  // One line without its newline; false at the end of input.
  bool line(std::string& out) {
    size_t at;
    while ((at = buffer.find('\n')) == std::string::npos) {
      if (!fill()) return false;
    }
    out = buffer.substr(0, at);
    buffer.erase(0, at + 1);
    return true;
  }
  bool bytes(size_t n, std::string& out) {
    while (buffer.size() < n + 1) {
      if (!fill()) return false;
    }
    out = buffer.substr(0, n);
    buffer.erase(0, n + 1);  // and its newline
    return true;
  }
};

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

}  // namespace

int main() {
  Input in;
  std::string line, key, cwd;
  std::vector<std::string> env, args;
  alarm(60);  // the whole header comes at once, or the controller is gone
  if (!in.line(line) || line != "tunerun-ssh-rank 1") die("expected the launcher's header");
  while (true) {
    if (!in.line(line)) die("the launcher's input ended before start");
    if (line == "start") break;
    const size_t space = line.find(' ');
    const std::string tag = line.substr(0, space);
    const size_t n = std::strtoul(line.c_str() + space + 1, nullptr, 10);
    std::string value;
    if (space == std::string::npos || !in.bytes(n, value)) die("malformed record: " + line);
    if (tag == "key") {
      key = value;
    } else if (tag == "cwd") {
      cwd = value;
    } else if (tag == "env") {
      env.push_back(value);
    } else if (tag == "arg") {
      args.push_back(value);
    } else {
      die("unknown record " + tag);
    }
  }
  alarm(0);
  if (args.empty()) die("no command to run");

  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tunerun-rank-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) die("cannot make a private folder: " + dir);
  const std::string key_file = dir + "/rank.key";
  const int fd = open(key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, key.data(), key.size()) != static_cast<ssize_t>(key.size())) {
    die("cannot write " + key_file + ": " + std::strerror(errno));
  }
  close(fd);
  auto clean = [&] {
    unlink(key_file.c_str());
    rmdir(dir.c_str());
  };

  // This host's environment, then the launcher's over it.
  for (const std::string& var : env) {
    const size_t eq = var.find('=');
    if (eq != std::string::npos) setenv(var.substr(0, eq).c_str(), var.c_str() + eq + 1, 1);
  }
  setenv("TUNERUN_CURVE_KEY_FILE", key_file.c_str(), 1);
  setenv("TUNERUN_PARENT_PID", std::to_string(getpid()).c_str(), 1);

  struct sigaction stop {};
  stop.sa_handler = on_stop;
  sigaction(SIGTERM, &stop, nullptr);
  sigaction(SIGHUP, &stop, nullptr);
  sigaction(SIGINT, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    clean();
    die(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(125);
    for (int s : {SIGTERM, SIGHUP, SIGINT, SIGPIPE}) signal(s, SIG_DFL);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "tunerun-ssh-rank: cannot enter %s: %s\n", cwd.c_str(),
                   std::strerror(errno));
      _exit(127);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "tunerun-ssh-rank: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(child, child);  // also here: no signal may miss the group
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (pidfd < 0) {
    kill(-child, SIGKILL);
    clean();
    die(std::string("cannot watch the rank: ") + std::strerror(errno));
  }

  // A signal number a line; the input's end ends the rank.
  auto forward_signals = [&] {
    size_t at;
    while ((at = in.buffer.find('\n')) != std::string::npos) {
      const int sig = std::atoi(in.buffer.substr(0, at).c_str());
      in.buffer.erase(0, at + 1);
      if (sig > 0) kill(-child, sig);
    }
  };
  forward_signals();    // any that came with the header
  bool ending = false;  // the input ended: the rank is being killed
  time_t kill_at = 0;
  while (true) {
    if (g_stop && !ending) in.eof = true;
    if (in.eof && !ending) {
      ending = true;
      kill(-child, SIGTERM);
      kill_at = time(nullptr) + kKillGraceS;
    }
    pollfd fds[2] = {{pidfd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    const int n = poll(fds, ending ? 1 : 2, ending ? 200 : -1);
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) break;
    if (ending && time(nullptr) >= kill_at) kill(-child, SIGKILL);
    if (!ending && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      in.fill();
      forward_signals();
    }
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-child, SIGKILL);  // what it started and left behind
  clean();
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
