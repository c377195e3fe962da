#include "tune/launch/sim/peer_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <thread>

#include "core/errors.h"
#include "tune/launch/sim/wire.h"

extern char** environ;

namespace tune::sim {

PeerProcess::PeerProcess(SimulationSpec simulation, std::filesystem::path executable)
    : simulation_(simulation), executable_(std::move(executable)) {
  for (int n = 0; n < simulation_.nodes; ++n) {
    SlurmNode node;
    node.name = fmt::format("sim-n{}", n + 1);
    node.cpus = simulation_.cpus_per_node;
    node.gpus = simulation_.gpus_per_node;
    nodes_.push_back(std::move(node));
  }
}

PeerProcess::~PeerProcess() {
  if (fd_ >= 0) close(fd_);
  if (!process_) return;
  // It ends once it sees the channel closed; a wedged one is killed.
  for (int i = 0; i < 2000 && !process_->try_reap(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!process_->exit_status()) {
    ::kill(process_->pid(), SIGKILL);
    while (!process_->try_reap()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void PeerProcess::start() {
  if (ended_) throw Error("the simulated peers' process ended; see " + log_file_.string());
  if (process_) return;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    throw Error(fmt::format("cannot make the simulated peers' channel: {}", strerror(errno)));
  }
  // The child's end survives its exec; the controller starts no other
  // process meanwhile (one event loop).
  fcntl(pair[1], F_SETFD, 0);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  try {
    process_.emplace(ChildProcess::spawn(
        {{executable_.string(), std::to_string(pair[1])}, std::move(env), log_file_}));
  } catch (...) {
    close(pair[0]);
    close(pair[1]);
    throw;
  }
  close(pair[1]);
  fd_ = pair[0];
  std::vector<std::string> names;
  for (const auto& node : nodes_) names.push_back(node.name);
  now_ = clock_now();  // virtual time: where the simulation starts (a resume's, later)
  send({{"op", "init"},
        {"simulation", simulation_to_json(simulation_)},
        {"nodes", names},
        {"now", now_.time_since_epoch().count()}});
}

void PeerProcess::send(const Json& message) {
  start();
  try {
    send_message(fd_, message);
  } catch (const Error& e) {
    lose_everything(e.what());
    throw;
  }
}

void PeerProcess::pump(int wait_ms) {
  if (fd_ < 0 || ended_) return;
  if (wait_ms > 0) {
    pollfd item{fd_, POLLIN, 0};
    ::poll(&item, 1, wait_ms);
  }
  try {
    while (auto message = receive_message(fd_)) on_message(*message);
  } catch (const Error& e) {
    lose_everything(e.what());
  }
}

bool PeerProcess::advance(std::optional<Clock::time_point> deadline,
                          const std::vector<std::string>& sent,
                          const std::function<void(const std::string&)>& take) {
  if (ended_) return false;
  try {
    send({{"op", "advance"},
          {"sent", sent},
          {"to", deadline ? Json(deadline->time_since_epoch().count()) : Json()}});
  } catch (const Error&) {
    return true;  // the peers are gone, and their ranks with them
  }
  std::optional<Json> step;
  try {
    while (!(step = receive_message(fd_))) {
      pollfd item{fd_, POLLIN, 0};
      ::poll(&item, 1, -1);
    }
  } catch (const Error& e) {
    lose_everything(e.what());
    return true;
  }
  const Clock::time_point now{Clock::duration(step->at("now").get<int64_t>())};
  const bool moved = now > now_ || !step->at("happened").empty();
  now_ = now;
  VirtualTime::set(now);
  for (const auto& event : step->at("happened")) {
    if (event.is_string()) {
      take(event.get<std::string>());
    } else {
      on_message(event);
    }
  }
  return moved;
}

void PeerProcess::on_message(const Json& message) {
  const std::string op = message.at("op").get<std::string>();
  if (op == "exit") {
    const auto it = groups_.find(message.at("group").get<int64_t>());
    if (it == groups_.end()) return;  // a group gone already
    const int signal = message.at("signal").get<int>();
    it->second->on_exit(
        message.at("rank").get<int>(),
        {.code = message.at("code").get<int>(), .signal = signal, .signaled = signal != 0},
        message.at("node_lost").get<std::string>());
  } else if (op == "busy") {
    const auto it = groups_.find(message.at("group").get<int64_t>());
    if (it != groups_.end())
      it->second->on_busy(message.at("rank").get<int>(), message.at("busy").get<bool>());
  } else if (op == "node") {
    SlurmNode& node = nodes_.at(message.at("node").get<size_t>());
    if (message.at("up").get<bool>()) {
      node.health = NodeHealth::kUsable;
      notices_.push_back(fmt::format("simulated node {} is back", node.name));
    } else {
      node.health = NodeHealth::kDown;
      ++node.failures;
      node.failure = message.at("why").get<std::string>();
      notices_.push_back(node.failure);
    }
  }
}

// The peers' process is gone: so is every rank it held.
void PeerProcess::lose_everything(const std::string& why) {
  if (ended_) return;
  ended_ = true;
  notices_.push_back(
      fmt::format("the simulated peers' process ended ({}); see {}", why, log_file_.string()));
  const auto groups = groups_;  // a sink may remove itself
  for (const auto& [id, sink] : groups) {
    sink->on_exit(-1, {.signal = SIGKILL, .signaled = true}, "");
  }
}

}  // namespace tune::sim
