#include "tune/control_channel.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tune {

namespace {

std::string rank_name(const std::string& trial_id, int rank) {
  return fmt::format("{}\n{}", trial_id, rank);
}

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
    auto bound = peers_.find(peer);
    const Peer* known = bound == peers_.end() ? nullptr : &bound->second;
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
    if (beat != nullptr && !beats_for_its_rank(*beat, key)) continue;
    if (auto why = check_key(peer, key, message)) {
      on_reject(peer, nullptr, *why);  // an impostor: the rank it names did nothing wrong
      continue;
    }
    on_message(peer, known, message);
  }
}

std::optional<std::string> ControlChannel::check_key(const std::string& routing_id,
                                                     const std::string& key,
                                                     const protocol::Message& message) {
  if (const auto* hello = std::get_if<protocol::Hello>(&message)) {
    auto issued = issued_.find(key);
    if (issued == issued_.end() || issued->second.trial_id != hello->trial_id ||
        issued->second.attempt != hello->attempt || issued->second.rank != hello->rank) {
      return fmt::format(
          "HELLO as rank {} of trial {} attempt {} from a connection whose key was not issued "
          "to that rank",
          hello->rank, hello->trial_id, hello->attempt);
    }
    keys_[routing_id] = key;
    return std::nullopt;
  }
  auto held = keys_.find(routing_id);
  if (held == keys_.end() || held->second == key) return std::nullopt;
  return fmt::format("{} on the routing id of a rank, from a connection without its key",
                     protocol::type_name(message));
}

// A rank beats on a connection of its own, holding the key of its HELLO.
bool ControlChannel::beats_for_its_rank(const protocol::Heartbeat& beat,
                                        const std::string& key) const {
  auto bound = bound_.find(rank_name(beat.trial_id, beat.rank));
  if (bound == bound_.end()) return true;  // not bound (yet): nothing to check against
  auto held = keys_.find(bound->second);
  return held == keys_.end() || held->second == key;
}

void ControlChannel::admit(const std::string& public_key, const std::string& trial_id, int attempt,
                           int rank) {
  issued_[public_key] = {trial_id, attempt, rank};
  zap_->admit(public_key);
}

void ControlChannel::revoke(const std::string& public_key) {
  zap_->revoke(public_key);
  issued_.erase(public_key);
  std::erase_if(keys_, [&](const auto& entry) { return entry.second == public_key; });
}

void ControlChannel::forget_rank(const std::string& routing_id, const Peer& peer) {
  auto bound = bound_.find(rank_name(peer.trial_id, peer.rank));
  if (bound != bound_.end() && bound->second == routing_id) bound_.erase(bound);
}

void ControlChannel::bind_peer(const std::string& routing_id, Peer peer) {
  auto& slot = peers_[routing_id];
  forget_rank(routing_id, slot);
  bound_[rank_name(peer.trial_id, peer.rank)] = routing_id;
  slot = std::move(peer);
}

void ControlChannel::unbind_peer(const std::string& routing_id) {
  auto bound = peers_.find(routing_id);
  if (bound != peers_.end()) forget_rank(routing_id, bound->second);
  peers_.erase(routing_id);
  std::erase_if(outbox_, [&](const auto& entry) { return entry.first == routing_id; });
}

void ControlChannel::queue(const std::string& routing_id, const protocol::Message& message) {
  outbox_.emplace_back(routing_id, protocol::encode(message));
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
  for (auto& [peer, bytes] : outbox_) {
    try {
      socket_.send(zmq::buffer(peer), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
    } catch (const zmq::error_t&) {
      unreachable.push_back(peer);  // EHOSTUNREACH: the rank is gone
    }
  }
  outbox_.clear();
  return unreachable;
}

std::string ControlChannel::peer_name(const std::string& routing_id) {
  std::string hex;
  for (unsigned char c : routing_id) hex += fmt::format("{:02x}", c);
  return hex;
}

}  // namespace tune
