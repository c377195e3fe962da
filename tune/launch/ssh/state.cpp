// The SSH launcher's hosts and their connections (tune/launch/ssh/state.h).
#include "tune/launch/ssh/state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/errors.h"
#include "tune/launch/storage_probe.h"

namespace tune::detail {
namespace {

// The last line of `file` that is not empty.
std::string log_last_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) last = line;
  }
  return last;
}

// Kills `child` (an ssh: it ends its session or connection) and reaps it.
void end_child(ChildProcess& child) {
  if (child.exit_status()) return;
  ::kill(child.pid(), SIGTERM);
  for (int i = 0; !child.try_reap(); ++i) {
    if (i == 200) ::kill(child.pid(), SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string find_ssh_program(const std::string& name, const std::string& package) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
  }
  throw ConfigError::at_key(
      "cluster.launcher",
      fmt::format("launcher \"ssh\" needs {}, which is not on PATH (Debian's {})", name, package));
}

std::vector<std::string> ssh_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

SshState::SshState(const std::vector<SshHost>& list, SshOptions opts)
    : options(std::move(opts)),
      ssh(find_ssh_program("ssh", "openssh-client")),
      setpriv(find_ssh_program("setpriv", "util-linux")) {
  allocation.job_id = "hostfile";
  for (const SshHost& host : list) {
    SlurmNode node{.name = host.name, .cpus = host.cpus, .gpus = host.gpus};
    node.retire_after = options.retire_after;
    allocation.nodes.push_back(node);
    SshHostState state;
    state.destination = host.destination;
    state.gpus_taken.assign(host.gpus, false);
    hosts.push_back(std::move(state));
  }
  // Sockets live under a short private path (a socket's path has 107 bytes at most).
  std::string dir = (std::filesystem::temp_directory_path() / "tunerun-ssh-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    throw Error(fmt::format("cannot make a private folder {} for ssh's control sockets", dir));
  }
  control_dir = dir;
  timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

SshState::~SshState() {
  for (auto& host : hosts) {
    if (host.probe) end_child(*host.probe);
    if (host.master) end_child(*host.master);
  }
  if (timer_fd >= 0) close(timer_fd);
  std::error_code ignored;
  std::filesystem::remove_all(control_dir, ignored);
}

std::filesystem::path SshState::socket(int host) const {
  return control_dir / fmt::format("h{}", host);
}

std::filesystem::path SshState::master_log(int host) const {
  return control_dir / fmt::format("h{}.log", host);
}

std::vector<std::string> SshState::session_argv(int host,
                                                const std::vector<std::string>& args) const {
  // setpriv: the session ends with the controller, even a SIGKILLed one.
  std::vector<std::string> argv{setpriv, "--pdeathsig",
                                "TERM",  "--",
                                ssh,     "-T",
                                "-o",    "BatchMode=yes",
                                "-o",    "ControlMaster=no",
                                "-o",    "ControlPath=" + socket(host).string(),
                                "-o",    fmt::format("ConnectTimeout={}", kConnectTimeoutS)};
  if (!options.ssh_config.empty()) argv.insert(argv.end(), {"-F", options.ssh_config.string()});
  argv.push_back(hosts[host].destination);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string SshState::remote_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (line.empty() ? "" : " ") + quoted + "'";
  }
  return line;
}

void SshState::connect(int host) {
  std::error_code ignored;
  std::filesystem::remove(socket(host), ignored);  // a dead master's
  std::vector<std::string> argv{setpriv,
                                "--pdeathsig",
                                "TERM",
                                "--",
                                ssh,
                                "-N",
                                "-T",
                                "-o",
                                "BatchMode=yes",
                                "-o",
                                "ControlMaster=yes",
                                "-o",
                                "ControlPersist=no",
                                "-o",
                                "ControlPath=" + socket(host).string(),
                                "-o",
                                fmt::format("ConnectTimeout={}", kConnectTimeoutS),
                                "-o",
                                fmt::format("ServerAliveInterval={}", kAliveIntervalS),
                                "-o",
                                "ServerAliveCountMax=3"};
  if (!options.ssh_config.empty()) argv.insert(argv.end(), {"-F", options.ssh_config.string()});
  argv.push_back(hosts[host].destination);
  std::filesystem::remove(master_log(host), ignored);
  hosts[host].master =
      ChildProcess::spawn({.argv = argv, .env = ssh_environment(), .log_file = master_log(host)});
}

void SshState::await_connections(Clock::duration limit) {
  for (size_t i = 0; i < hosts.size(); ++i) connect(static_cast<int>(i));
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    refresh();
    const bool settled = std::all_of(
        hosts.begin(), hosts.end(), [](const SshHostState& h) { return h.connected || !h.master; });
    if (settled) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void SshState::host_failed(int host, const std::string& why) {
  SlurmNode& node = allocation.nodes[host];
  if (node_failed(node, why).empty()) return;  // counted already
  if (node.health == NodeHealth::kRetired) {
    note(fmt::format("host {} was lost {} times ({}); it is not used again in this run", node.name,
                     node.failures, why));
  } else {
    note(
        fmt::format("host {} was lost ({}); no trial is placed there until ssh reaches it again "
                    "(tried every {} s)",
                    node.name, why, options.retry.count()));
  }
}

void SshState::suspect(const std::vector<int>& nodes) {
  for (int node : nodes) suspect_node(allocation.nodes[node]);
}

void SshState::refresh() {
  uint64_t expirations;
  while (read(timer_fd, &expirations, sizeof expirations) > 0) {
  }
  const auto now = Clock::now();
  auto next = now + std::chrono::hours(1);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const int h = static_cast<int>(i);
    SshHostState& host = hosts[i];
    SlurmNode& node = allocation.nodes[i];
    if (host.master && host.master->try_reap()) {
      std::string said = log_last_line(master_log(h));
      if (said.empty()) said = "ssh " + host.master->exit_status()->describe();
      host.master.reset();
      node.slurm_down = true;
      host.next_try = now + options.retry;
      if (std::exchange(host.connected, false)) {
        host.said_unreachable = true;  // the loss says it
        host_failed(h, fmt::format("ssh lost its connection: {}", said));
      } else if (!std::exchange(host.said_unreachable, true)) {
        note(fmt::format("host {} cannot be reached ({}); tried again every {} s", node.name, said,
                         options.retry.count()));
      }
    }
    if (host.master && !host.connected && std::filesystem::exists(socket(h))) {
      host.connected = true;
      host.said_unreachable = false;
      node.slurm_down = false;
      // Reported up: its connection is the probe (its health says whether it failed before).
      if (node.health == NodeHealth::kDown) node.health = NodeHealth::kSuspected;
      if (!probe_passed(node).empty()) {
        note(fmt::format("host {} is back: ssh reached it again", node.name));
      }
    }
    if (!host.master && node.health != NodeHealth::kRetired && now >= host.next_try) connect(h);
    if (host.master && !host.connected) next = std::min(next, now + std::chrono::milliseconds(100));
    if (!host.master && node.health != NodeHealth::kRetired) next = std::min(next, host.next_try);
    // A host a group ended badly on: one command over its connection decides.
    if (host.probe && (host.probe->try_reap() || now > host.probe_deadline)) {
      const bool ran = host.probe->exit_status() && host.probe->exit_status()->ok();
      if (!host.probe->exit_status()) end_child(*host.probe);
      const std::string why =
          fmt::format("a probe over ssh {}", host.probe->exit_status()->describe());
      host.probe.reset();
      if (node.health == NodeHealth::kSuspected) {
        if (ran) {
          probe_passed(node);
        } else {
          host_failed(h, why);
        }
      }
    }
    if (!host.probe && host.connected && node.health == NodeHealth::kSuspected) {
      host.probe = ChildProcess::spawn({.argv = session_argv(h, {"--", "true"}),
                                        .env = ssh_environment(),
                                        .log_file = control_dir / "probes.log"});
      host.probe_deadline = now + kProbeTimeout;
    }
    if (host.probe) next = std::min(next, now + std::chrono::milliseconds(50));
  }
  const auto in = std::max(next - now, Clock::duration(std::chrono::milliseconds(1)));
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(in).count();
  itimerspec when{};
  when.it_value.tv_sec = ns / 1000000000;
  when.it_value.tv_nsec = ns % 1000000000;
  timerfd_settime(timer_fd, 0, &when, nullptr);
}

// Every reachable host copies a token the controller wrote into a file of its own.
void SshState::check_storage(const std::filesystem::path& experiment_dir) {
  refresh();
  const StorageProbe probe = StorageProbe::write(experiment_dir);
  const std::filesystem::path& dir = probe.dir;
  std::vector<int> probed;
  std::vector<ChildProcess> sessions;
  std::vector<std::string> skipped;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const SlurmNode& node = allocation.nodes[i];
    if (!node.usable()) {
      skipped.push_back(fmt::format(
          "{} ({})", node.name,
          (node.slurm_down ? std::string("unreachable") : std::string(to_string(node.health)))));
      continue;
    }
    const std::string seen = (dir / fmt::format("seen_{}", i)).string();
    const std::string command = fmt::format(
        "cat {} > {} || true", remote_command({(dir / "token").string()}), remote_command({seen}));
    probed.push_back(static_cast<int>(i));
    sessions.push_back(
        ChildProcess::spawn({.argv = session_argv(static_cast<int>(i), {"--", command}),
                             .env = ssh_environment(),
                             .log_file = dir / fmt::format("ssh_{}.log", i)}));
  }
  std::vector<std::string> blind, unreachable;
  const auto deadline = Clock::now() + kProbeTimeout;
  for (size_t k = 0; k < probed.size(); ++k) {
    while (!sessions[k].try_reap()) {
      if (Clock::now() > deadline) ::kill(sessions[k].pid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::string& name = allocation.nodes[probed[k]].name;
    if (probe.seen_in(dir / fmt::format("seen_{}", probed[k]))) continue;
    if (sessions[k].exit_status()->ok()) {
      blind.push_back(name);
    } else {
      unreachable.push_back(
          fmt::format("{} (ssh {})", name, sessions[k].exit_status()->describe()));
      suspect({probed[k]});
    }
  }
  if (!blind.empty()) {
    throw StorageError(fmt::format(
        "the experiment directory {} is not shared with host(s) {}: a file the controller wrote "
        "there was not seen from them. Put storage_path on a filesystem every host mounts at the "
        "same path",
        std::filesystem::absolute(experiment_dir).string(), fmt::join(blind, ", ")));
  }
  skipped.insert(skipped.end(), unreachable.begin(), unreachable.end());
  if (skipped.size() == hosts.size()) {
    throw Error(fmt::format("no host of the hostfile can be reached over ssh now: {}",
                            fmt::join(skipped, "; ")));
  }
  std::filesystem::remove_all(dir);
  if (!skipped.empty()) {
    note(
        fmt::format("the storage check skipped host(s) {}; they are used once ssh "
                    "reaches them",
                    fmt::join(skipped, "; ")));
  }
}

}  // namespace tune::detail
