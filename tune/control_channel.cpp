#include "tune/control_channel.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tune {

namespace {

// The CURVE key ZAP named the connection by (tune/zap_handler.h).
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
  socket_.bind(endpoint);
  endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
}

void ControlChannel::drain(int limit, const Handler& on_message, const RejectHandler& on_reject) {
  for (int i = 0; i < limit; ++i) {
    zmq::message_t identity;
    if (!socket_.recv(identity, zmq::recv_flags::dontwait)) return;
    std::vector<zmq::message_t> frames;
    while (socket_.get(zmq::sockopt::rcvmore)) {
      frames.emplace_back();
      (void)socket_.recv(frames.back(), zmq::recv_flags::none);
    }
    const std::string peer = identity.to_string();
    const Peer* known = book_.peer(peer);
    if (frames.size() != 1) {
      on_reject(peer, known, fmt::format("expected one frame, got {}", frames.size()));
      continue;
    }
    protocol::Message message;
    try {
      message = protocol::decode(frames[0].to_string_view());
    } catch (const ProtocolError& e) {
      on_reject(peer, known, e.what());
      continue;
    }
    const std::string key = connection_key(frames[0]);
    const auto* beat = std::get_if<protocol::Heartbeat>(&message);
    // Not an offence: a late beat of a killed group whose trial's rank has a new connection.
    if (beat != nullptr && !book_.beats_for_its_rank(*beat, key)) continue;
    if (auto why = book_.check_key(peer, key, message)) {
      on_reject(peer, nullptr, *why);  // an impostor: the rank it names did nothing wrong
      continue;
    }
    if (std::holds_alternative<protocol::Report>(message)) {
      report_received_ = std::chrono::steady_clock::now();
    }
    on_message(peer, known, message);
    report_received_.reset();
  }
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
