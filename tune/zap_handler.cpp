#include "tune/zap_handler.h"

#include <fmt/format.h>

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

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, zmq::socket_t& server)
    : stop_(make_socket(context, zmq::socket_type::pair)) {
  auto zap = make_socket(context, zmq::socket_type::rep);
  zap.bind("inproc://zeromq.zap.01");
  const std::string monitor_name = inproc_name(this, "monitor");
  // Failures ZAP never sees: a peer without CURVE, or with another server key.
  if (zmq_socket_monitor(
          server.handle(), monitor_name.c_str(),
          ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
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
    if (items[1].revents & ZMQ_POLLIN) note_handshake_failure(monitor);
  }
}

// A request: version, request id, domain, address, routing id, mechanism,
// then the mechanism's credentials (CURVE: the client's 32-byte public key).
void ZapHandler::answer(zmq::socket_t& zap) {
  std::vector<zmq::message_t> frames = receive_frames(zap);
  bool ok = false;
  bool ended_group = false;
  std::string why = "a malformed ZAP request";
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
        "peer {} presented CURVE key {}, {}", frames[3].to_string(), key,
        ended_group ? "issued to a rank whose group has ended" : "not one issued to a live rank");
  } else if (frames.size() >= 6) {
    why = fmt::format("peer {} used mechanism {}, not CURVE", frames[3].to_string(),
                      frames[5].to_string());
  }
  if (!ok) refuse({why, ended_group});
  const std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
  zap.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
  zap.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
  zap.send(ok ? zmq::str_buffer("200") : zmq::str_buffer("400"), zmq::send_flags::sndmore);
  zap.send(ok ? zmq::str_buffer("OK") : zmq::str_buffer("unknown key"), zmq::send_flags::sndmore);
  // The user id: the key itself, which the channel maps to the rank it was issued to.
  zap.send(zmq::const_buffer(key, ok ? std::strlen(key) : 0), zmq::send_flags::sndmore);
  zap.send(zmq::str_buffer(""), zmq::send_flags::none);  // metadata
}

// A monitor event: 2 bytes of event, 4 of value, then the endpoint.
void ZapHandler::note_handshake_failure(zmq::socket_t& monitor) {
  std::vector<zmq::message_t> frames = receive_frames(monitor);
  if (frames.empty() || frames[0].size() < 6) return;
  uint16_t event = 0;
  std::memcpy(&event, frames[0].data(), sizeof event);
  if (event == ZMQ_EVENT_MONITOR_STOPPED) return;
  refuse(
      {fmt::format("a peer failed the CURVE handshake on {} (no keys, or not this "
                   "controller's)",
                   frames.size() > 1 ? frames[1].to_string() : "the control socket")});
}

void ZapHandler::refuse(Refusal refusal) {
  std::lock_guard lock(mutex_);
  refusals_.push_back(std::move(refusal));
}

}  // namespace tune
