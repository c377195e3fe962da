#include "tune/channel/zap_handler.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace tune {
namespace {

constexpr size_t kCurveKeyBytes = 32;

std::string inproc_name(const void* self, std::string_view what) {
  return fmt::format("inproc://tunerun-{}-{}", what, self);
}

zmq::socket_t make_socket(zmq::context_t& context, zmq::socket_type type) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, 0);
  return socket;
}

// Every frame of the next message.
std::vector<zmq::message_t> receive_frames(zmq::socket_t& socket) {
  std::vector<zmq::message_t> frames;
  do {
    frames.emplace_back();
    (void)socket.recv(frames.back(), zmq::recv_flags::none);
  } while (socket.get(zmq::sockopt::rcvmore));
  return frames;
}

// The IP address of the peer of socket `fd`; empty when it has none (closed already).
std::string peer_address(int fd) {
  sockaddr_storage peer{};
  socklen_t size = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &size) != 0) return {};
  char text[INET6_ADDRSTRLEN] = {};
  const void* address =
      peer.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6&>(peer).sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in&>(peer).sin_addr);
  if (inet_ntop(peer.ss_family, address, text, sizeof text) == nullptr) return {};
  return text;
}

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, zmq::socket_t& server)
    : stop_(make_socket(context, zmq::socket_type::pair)) {
  auto zap = make_socket(context, zmq::socket_type::rep);
  zap.bind("inproc://zeromq.zap.01");
  const std::string monitor_name = inproc_name(this, "monitor");
  // Failures ZAP never sees: a peer without CURVE, or with another server key;
  // connections accepted and closed give such a peer its address.
  if (zmq_socket_monitor(server.handle(), monitor_name.c_str(),
                         ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_ACCEPTED |
                             ZMQ_EVENT_DISCONNECTED) != 0) {
    throw zmq::error_t();
  }
  auto monitor = make_socket(context, zmq::socket_type::pair);
  monitor.connect(monitor_name);
  const std::string stop_name = inproc_name(this, "zap-stop");
  stop_.bind(stop_name);
  auto stop = make_socket(context, zmq::socket_type::pair);
  stop.connect(stop_name);
  thread_ =
      std::thread(&ZapHandler::serve, this, std::move(zap), std::move(monitor), std::move(stop));
}

ZapHandler::~ZapHandler() {
  stop_.send(zmq::str_buffer("x"), zmq::send_flags::none);
  thread_.join();
}

void ZapHandler::admit(const std::string& public_key) {
  std::lock_guard lock(mutex_);
  admitted_.insert(public_key);
}

void ZapHandler::revoke(const std::string& public_key) {
  // Remembered a while, to tell a finished rank's late connection from an outsider's.
  constexpr size_t kMaxRevoked = 4096;
  std::lock_guard lock(mutex_);
  admitted_.erase(public_key);
  if (revoked_.insert(public_key).second) revoked_order_.push_back(public_key);
  if (revoked_order_.size() > kMaxRevoked) {
    revoked_.erase(revoked_order_.front());
    revoked_order_.pop_front();
  }
}

std::vector<Refusal> ZapHandler::take_refusals() {
  std::lock_guard lock(mutex_);
  return std::exchange(refusals_, {});
}

void ZapHandler::serve(zmq::socket_t zap, zmq::socket_t monitor, zmq::socket_t stop) {
  std::vector<zmq::pollitem_t> items{{zap.handle(), 0, ZMQ_POLLIN, 0},
                                     {monitor.handle(), 0, ZMQ_POLLIN, 0},
                                     {stop.handle(), 0, ZMQ_POLLIN, 0}};
  while (true) {
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal meant for the controller's loop
      throw;
    }
    if (items[2].revents & ZMQ_POLLIN) return;
    if (items[0].revents & ZMQ_POLLIN) answer(zap);
    if (items[1].revents & ZMQ_POLLIN) on_monitor_event(monitor);
  }
}

// A request: version, request id, domain, address, routing id, mechanism,
// then the mechanism's credentials (CURVE: the client's 32-byte public key).
void ZapHandler::answer(zmq::socket_t& zap) {
  std::vector<zmq::message_t> frames = receive_frames(zap);
  bool ok = false;
  bool ended_group = false;
  std::string why = "a malformed ZAP request";
  const std::string address = frames.size() >= 4 ? frames[3].to_string() : "";
  char key[41] = {};
  if (frames.size() >= 7 && frames[5].to_string_view() == "CURVE" &&
      frames[6].size() == kCurveKeyBytes) {
    zmq_z85_encode(key, static_cast<const uint8_t*>(frames[6].data()), kCurveKeyBytes);
    {
      std::lock_guard lock(mutex_);
      ok = admitted_.contains(key);
      ended_group = !ok && revoked_.contains(key);
    }
    why = fmt::format(
        "it presented CURVE key {}, {}", key,
        ended_group ? "issued to a rank whose group has ended" : "not one issued to a live rank");
  } else if (frames.size() >= 6) {
    why = fmt::format("it used mechanism {}, not CURVE", frames[5].to_string());
  }
  if (!ok) refuse({address, why, ended_group});
  const std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
  zap.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
  zap.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
  zap.send(ok ? zmq::str_buffer("200") : zmq::str_buffer("400"), zmq::send_flags::sndmore);
  zap.send(ok ? zmq::str_buffer("OK") : zmq::str_buffer("unknown key"), zmq::send_flags::sndmore);
  // The user id: the key itself, which the channel maps to the rank it was issued to.
  zap.send(zmq::const_buffer(key, ok ? std::strlen(key) : 0), zmq::send_flags::sndmore);
  zap.send(zmq::str_buffer(""), zmq::send_flags::none);  // metadata
}

// A monitor event: 2 bytes of event, 4 of value (a file descriptor for
// ACCEPTED and DISCONNECTED), then the socket's endpoint. A handshake
// failure is followed at once by its connection's DISCONNECTED.
void ZapHandler::on_monitor_event(zmq::socket_t& monitor) {
  std::vector<zmq::message_t> frames = receive_frames(monitor);
  if (frames.empty() || frames[0].size() < 6) return;
  uint16_t event = 0;
  uint32_t value = 0;
  std::memcpy(&event, frames[0].data(), sizeof event);
  std::memcpy(&value, static_cast<const char*>(frames[0].data()) + sizeof event, sizeof value);
  const int fd = static_cast<int>(value);
  switch (event) {
    case ZMQ_EVENT_ACCEPTED:
      accepted_[fd] = peer_address(fd);
      return;
    case ZMQ_EVENT_DISCONNECTED: {
      auto it = accepted_.find(fd);
      std::string address = it == accepted_.end() ? "" : std::move(it->second);
      if (it != accepted_.end()) accepted_.erase(it);
      if (failed_handshake_) refuse({address, *std::exchange(failed_handshake_, std::nullopt)});
      return;
    }
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      // One not followed by its disconnection (never seen) goes without an address.
      if (failed_handshake_) refuse({"", *failed_handshake_});
      failed_handshake_ =
          fmt::format("it failed the CURVE handshake on {} (no keys, or not this controller's)",
                      frames.size() > 1 ? frames[1].to_string() : "the control socket");
      return;
    default:
      return;
  }
}

void ZapHandler::refuse(Refusal refusal) {
  std::lock_guard lock(mutex_);
  refusals_.push_back(std::move(refusal));
}

}  // namespace tune
