#include "tune/channel/router.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tune {

namespace {

// How long take_from waits for a message the simulation says was sent.
constexpr std::chrono::milliseconds kTakeWait{60'000};

// Connections waiting to be accepted. ZeroMQ's default, 100, is far fewer
// than the ranks of a wave of trial starts (1,000 trials x 4 ranks connect
// at once, each twice: control and heartbeats): the kernel drops what
// overflows the queue and the peer's TCP retries 1, 3, 7, 15, 31 s later,
// so that some ranks connected only after their START timeout. The kernel
// caps it at net.core.somaxconn (4,096 on current kernels).
constexpr int kAcceptBacklog = 8192;

// The CURVE key ZAP named the connection by (tune/channel/zap_handler.h).
std::string connection_key(zmq::message_t& frame) {
  try {
    return frame.gets("User-Id");
  } catch (const zmq::error_t&) {
    return {};
  }
}

}  // namespace

ChannelKeys make_channel_keys(const std::filesystem::path& experiment_dir) {
  const auto dir = experiment_dir / "keys";
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);  // the keys of an earlier run's ranks
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  ChannelKeys keys{train::make_curve_keypair(), dir};
  train::write_keypair(dir / "controller.key", keys.controller);
  return keys;
}

ControlChannel::ControlChannel(zmq::context_t& context, const std::string& endpoint,
                               const ChannelKeys& keys)
    : socket_(context, zmq::socket_type::router) {
  socket_.set(zmq::sockopt::linger, 0);
  train::make_curve_server(socket_, keys.controller);
  zap_ = std::make_unique<ZapHandler>(context, socket_);
  socket_.set(zmq::sockopt::router_mandatory, true);
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(protocol::kMaxMessageBytes));
  socket_.set(zmq::sockopt::backlog, kAcceptBacklog);
  socket_.bind(endpoint);
  endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
}

int ControlChannel::drain(int limit, const Handler& on_message, const RejectHandler& on_reject) {
  int received = 0;
  for (; received < limit; ++received) {
    auto message = receive(std::chrono::milliseconds(0));
    if (!message) break;
    handle(*message, on_message, on_reject);
  }
  return received;
}

void ControlChannel::take_from(const std::string& routing_id, const Handler& on_message,
                               const RejectHandler& on_reject) {
  if (auto held = held_.find(routing_id); held != held_.end()) {
    Received received = std::move(held->second.front());
    held->second.pop_front();
    if (held->second.empty()) held_.erase(held);
    return handle(received, on_message, on_reject);
  }
  while (true) {
    auto received = receive(kTakeWait);
    if (!received) {
      throw Error(
          fmt::format("no message from peer {} within {} s, though the simulation "
                      "says it sent one",
                      peer_name(routing_id), kTakeWait.count() / 1000));
    }
    if (received->peer == routing_id) return handle(*received, on_message, on_reject);
    held_[received->peer].push_back(std::move(*received));
  }
}

std::optional<ControlChannel::Received> ControlChannel::receive(std::chrono::milliseconds wait) {
  zmq::message_t identity;
  if (!socket_.recv(identity, zmq::recv_flags::dontwait)) {
    if (wait.count() == 0) return std::nullopt;
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, wait);
    if (!socket_.recv(identity, zmq::recv_flags::dontwait)) return std::nullopt;
  }
  Received received{identity.to_string(), {}};
  while (socket_.get(zmq::sockopt::rcvmore)) {
    received.frames.emplace_back();
    (void)socket_.recv(received.frames.back(), zmq::recv_flags::none);
  }
  return received;
}

void ControlChannel::handle(Received& received, const Handler& on_message,
                            const RejectHandler& on_reject) {
  const std::string& peer = received.peer;
  auto& frames = received.frames;
  const Peer* known = book_.peer(peer);
  if (frames.size() != 1) {
    return on_reject(peer, known, fmt::format("expected one frame, got {}", frames.size()));
  }
  protocol::Message message;
  try {
    message = protocol::decode(frames[0].to_string_view());
  } catch (const ProtocolError& e) {
    return on_reject(peer, known, e.what());
  }
  const std::string key = connection_key(frames[0]);
  const auto* beat = std::get_if<protocol::Heartbeat>(&message);
  // Not an offence: a late beat of a killed group whose trial's rank has a new connection.
  if (beat != nullptr && !book_.beats_for_its_rank(*beat, key)) return;
  if (auto why = book_.check_key(peer, key, message)) {
    return on_reject(peer, nullptr, *why);  // an impostor: the rank it names did nothing wrong
  }
  if (std::holds_alternative<protocol::Report>(message)) {
    report_received_ = std::chrono::steady_clock::now();
  }
  on_message(peer, known, message);
  report_received_.reset();
}

void ControlChannel::admit(const std::string& public_key, const std::string& trial_id, int attempt,
                           int rank) {
  book_.issue(public_key, trial_id, attempt, rank);
  zap_->admit(public_key);
}

void ControlChannel::revoke(const std::string& public_key) {
  zap_->revoke(public_key);
  book_.revoke(public_key);
}

void ControlChannel::bind_peer(const std::string& routing_id, Peer peer) {
  book_.bind(routing_id, std::move(peer));
}

void ControlChannel::unbind_peer(const std::string& routing_id) {
  book_.unbind(routing_id);
  dropped_before_[routing_id] = outbox_.size();
}

void ControlChannel::queue(const std::string& routing_id, const protocol::Message& message) {
  const bool decision = std::holds_alternative<protocol::DecisionMsg>(message);
  outbox_.push_back(
      {routing_id, protocol::encode(message), decision ? report_received_ : std::nullopt});
}

void ControlChannel::send_now(const std::string& routing_id, const protocol::Message& message) {
  const std::string bytes = protocol::encode(message);
  try {
    socket_.send(zmq::buffer(routing_id), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
    sent(routing_id);
  } catch (const zmq::error_t&) {  // EHOSTUNREACH: the rank is gone
  }
}

std::vector<std::string> ControlChannel::flush() {
  std::vector<std::string> unreachable;
  for (size_t i = 0; i < outbox_.size(); ++i) {
    const auto& [peer, bytes, report_received] = outbox_[i];
    if (auto dropped = dropped_before_.find(peer);
        dropped != dropped_before_.end() && i < dropped->second) {
      continue;
    }
    try {
      socket_.send(zmq::buffer(peer), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
      sent(peer);
      if (report_received) {
        decision_latency_.add(std::chrono::steady_clock::now() - *report_received);
      }
    } catch (const zmq::error_t&) {
      unreachable.push_back(peer);  // EHOSTUNREACH: the rank is gone
    }
  }
  outbox_.clear();
  dropped_before_.clear();
  return unreachable;
}

std::string ControlChannel::peer_name(const std::string& routing_id) {
  std::string hex;
  for (unsigned char c : routing_id) hex += fmt::format("{:02x}", c);
  return hex;
}

}  // namespace tune
