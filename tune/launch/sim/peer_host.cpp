#include "tune/launch/sim/peer_host.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <unordered_set>

#include "core/errors.h"
#include "tune/launch/sim/wire.h"

namespace tune::sim {
namespace {

// A lookup of "NAME=value" variables, the last of a name winning.
class Variables {
 public:
  void add(const Json& list) {
    for (const auto& item : list) {
      const auto text = item.get<std::string>();
      const auto eq = text.find('=');
      if (eq != std::string::npos) values_[text.substr(0, eq)] = text.substr(eq + 1);
    }
  }
  const char* get(const char* name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : it->second.c_str();
  }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace

PeerHost::PeerHost(int fd)
    : fd_(fd),
      events_([this] { return virtual_ ? now_ : Clock::now(); }),
      world_{
          zmq_,
          events_,
          simulation_,
          [this](const SimPeer& peer, const ExitStatus& status, const std::string& node_lost) {
            on_exit(peer, status, node_lost);
          },
          [this](const SimPeer& peer, bool busy) {
            post({{"op", "busy"}, {"group", peer.group()}, {"rank", peer.rank()}, {"busy", busy}});
          },
          [this](const SimPeer& peer) {
            if (virtual_) happened_.push_back(peer.routing_id());
          }} {
  // Every peer holds two sockets; ZeroMQ's default allows 1023 in all.
  zmq_.set(zmq::ctxopt::max_sockets, zmq_.get(zmq::ctxopt::socket_limit));
}

void PeerHost::run() {
  while (!closed_) {
    if (virtual_) {
      serve_virtual();
    } else {
      serve_real();
    }
  }
}

// One turn in real time: what the launcher and the peers said, and the
// events due by now.
void PeerHost::serve_real() {
  std::vector<zmq::pollitem_t> items{
      {nullptr, fd_, static_cast<short>(ZMQ_POLLIN | (outbox_.empty() ? 0 : ZMQ_POLLOUT)), 0}};
  std::vector<SimPeer*> polled;
  for (auto& [key, peer] : peers_) {
    if (void* socket = peer->socket_handle()) {
      items.push_back({socket, 0, ZMQ_POLLIN, 0});
      polled.push_back(peer.get());
    }
  }
  try {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(next_timeout_ms()));
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    return;
  }
  if (items[0].revents & ZMQ_POLLIN) {
    try {
      while (auto message = receive_message(fd_)) on_message(*message);
    } catch (const Error&) {
      closed_ = true;  // the launcher is gone: so are its ranks
    }
  }
  for (size_t i = 1; i < items.size(); ++i) {
    if (items[i].revents & ZMQ_POLLIN) polled[i - 1]->on_readable();
  }
  events_.run_due();
  std::erase_if(peers_, [](const auto& entry) { return entry.second->exited(); });
  if (!closed_) flush();
}

// One turn in virtual time: what the launcher says (an advance among it).
void PeerHost::serve_virtual() {
  pollfd item{fd_, POLLIN, 0};
  if (::poll(&item, 1, -1) < 0) return;  // EINTR
  while (true) {
    std::optional<Json> message;
    try {
      message = receive_message(fd_);
    } catch (const Error&) {
      closed_ = true;  // the launcher is gone: so are its ranks
    }
    if (!message) return;
    on_message(*message);
  }
}

void PeerHost::advance(const Json& message) {
  for (const auto& sent : message.at("sent")) {
    const auto it = by_routing_id_.find(sent.get<std::string>());
    if (it != by_routing_id_.end() && !it->second->exited()) it->second->take_one();
  }
  // Time moves on only once the controller heard all that happened now.
  events_.run_due();
  if (happened_.empty()) {
    auto next = events_.next_due();
    if (!message.at("to").is_null()) {
      const Clock::time_point to{Clock::duration(message.at("to").get<int64_t>())};
      next = next ? std::min(*next, to) : to;
    }
    if (next) now_ = std::max(now_, *next);
    events_.run_due();
  }
  std::erase_if(by_routing_id_, [](const auto& entry) { return entry.second->exited(); });
  std::erase_if(peers_, [](const auto& entry) { return entry.second->exited(); });
  send_message(fd_, {{"op", "step"},
                     {"now", now_.time_since_epoch().count()},
                     {"happened", std::exchange(happened_, Json::array())}});
}

void PeerHost::unsay(const std::vector<std::string>& killed) {
  if (!virtual_ || killed.empty()) return;
  const std::unordered_set<std::string> ids(killed.begin(), killed.end());
  Json kept = Json::array();
  for (auto& entry : happened_) {
    if (!entry.is_string() || !ids.contains(entry.get<std::string>())) {
      kept.push_back(std::move(entry));
    }
  }
  happened_ = std::move(kept);
}

int PeerHost::next_timeout_ms() {
  const auto due = events_.next_due();
  if (!due) return -1;
  const double ms = std::chrono::duration<double, std::milli>(*due - events_.now()).count();
  return static_cast<int>(std::clamp(std::ceil(ms), 0.0, 3600e3));
}

void PeerHost::on_message(const Json& message) {
  const std::string op = message.at("op").get<std::string>();
  if (op == "init") {
    simulation_ = simulation_from_json(message.at("simulation"));
    virtual_ = simulation_.virtual_time();
    if (virtual_) now_ = Clock::time_point(Clock::duration(message.at("now").get<int64_t>()));
    node_names_ = message.at("nodes").get<std::vector<std::string>>();
    node_up_.assign(node_names_.size(), true);
    node_rng_.seed(simulation_.seed ^ 0x5eed0f4e0d3ULL);
    for (int node = 0; node < static_cast<int>(node_names_.size()); ++node) schedule_loss(node);
  } else if (op == "launch") {
    launch(message);
  } else if (op == "signal") {
    unsay(signal_group(message.at("group").get<int64_t>(), message.at("signal").get<int>()));
  } else if (op == "lose") {
    unsay(lose_node(message.at("node").get<int>(), "lost by the launcher"));
  } else if (op == "advance") {
    advance(message);
  } else {
    throw Error(fmt::format("unknown simulation message '{}'", op));
  }
}

void PeerHost::launch(const Json& message) {
  const int64_t group = message.at("group").get<int64_t>();
  for (const auto& rank : message.at("ranks")) start_rank(group, message.at("env"), rank);
}

// A rank whose environment or key file cannot be read ends as a worker
// process would: exit code 1, the reason in its log.
void PeerHost::start_rank(int64_t group, const Json& group_env, const Json& rank) {
  const int index = rank.at("rank").get<int>();
  const int node = rank.at("node").get<int>();
  const std::filesystem::path log_file = rank.at("log").get<std::string>();
  if (!node_up_.at(node)) {
    return post_exit(group, index, {.signal = SIGKILL, .signaled = true},
                     fmt::format("node {} lost (simulated)", node_names_[node]));
  }
  Variables variables;
  variables.add(group_env);
  variables.add(rank.at("env"));
  try {
    PeerSetup setup{.group = group,
                    .pid = rank.at("pid").get<int64_t>(),
                    .node = node,
                    .host = node_names_[node],
                    .env = train::WorkerEnv::from_variables(
                        [&](const char* name) { return variables.get(name); }),
                    .log_file = log_file};
    const char* reuse = variables.get(train::kEnvReuse);
    setup.reuse = reuse != nullptr && std::string_view(reuse) == "1";
    auto& peer = peers_[{group, index}] = std::make_unique<SimPeer>(world_, std::move(setup));
    if (virtual_) by_routing_id_[peer->routing_id()] = peer.get();
  } catch (const std::exception& e) {
    if (!log_file.empty()) {
      std::ofstream(log_file, std::ios::app) << "tunerun worker: " << e.what() << "\n";
    }
    post_exit(group, index, {.code = 1}, "");
  }
}

std::vector<std::string> PeerHost::signal_group(int64_t group, int signal) {
  std::vector<std::string> killed;
  if (signal == 0) return killed;
  for (auto it = peers_.lower_bound({group, 0}); it != peers_.end() && it->first.first == group;
       ++it) {
    if (it->second->exited()) continue;
    it->second->kill(signal);
    killed.push_back(it->second->routing_id());
  }
  return killed;
}

// Every rank on the node dies with it; the launcher learns the node is gone.
std::vector<std::string> PeerHost::lose_node(int node, const std::string& why) {
  std::vector<std::string> killed;
  if (node < 0 || node >= static_cast<int>(node_up_.size()) || !node_up_[node]) return killed;
  node_up_[node] = false;
  const std::string lost = fmt::format("node {} lost (simulated: {})", node_names_[node], why);
  for (auto& [key, peer] : peers_) {
    if (peer->node() != node || peer->exited()) continue;
    peer->kill(SIGKILL, lost);
    killed.push_back(peer->routing_id());
  }
  post({{"op", "node"}, {"node", node}, {"up", false}, {"why", lost}});
  if (simulation_.node_recovery_s > 0) {
    events_.after(simulation_.node_recovery_s, [this, node] { node_back(node); });
  }
  return killed;
}

void PeerHost::node_back(int node) {
  node_up_[node] = true;
  post({{"op", "node"}, {"node", node}, {"up", true}, {"why", ""}});
  schedule_loss(node);
}

// The node's next loss, node_loss_rate per hour.
void PeerHost::schedule_loss(int node) {
  if (simulation_.node_loss_rate <= 0) return;
  std::exponential_distribution<double> until(simulation_.node_loss_rate / 3600);
  events_.after(until(node_rng_), [this, node] { lose_node(node, "node_loss_rate"); });
}

void PeerHost::on_exit(const SimPeer& peer, const ExitStatus& status,
                       const std::string& node_lost) {
  post_exit(peer.group(), peer.rank(), status, node_lost);
}

void PeerHost::post_exit(int64_t group, int rank, const ExitStatus& status,
                         const std::string& node_lost) {
  post({{"op", "exit"},
        {"group", group},
        {"rank", rank},
        {"code", status.code},
        {"signal", status.signaled ? status.signal : 0},
        {"node_lost", node_lost}});
}

void PeerHost::post(Json message) {
  if (virtual_) return happened_.push_back(std::move(message));
  if (outbox_.empty() && !closed_ && try_send_message(fd_, message)) return;
  outbox_.push_back(std::move(message));
}

void PeerHost::flush() {
  while (!outbox_.empty() && try_send_message(fd_, outbox_.front())) outbox_.pop_front();
}

}  // namespace tune::sim
