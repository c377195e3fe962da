// SimPeer's ends of the wire (tune/launch/sim/peer.h): the messages that come
// on its control socket (read as they arrive, or in virtual time one at a
// time as the host hands them over), what it sends there, its heartbeats
// on a socket of their own, and its log lines.
#include <fmt/format.h>

#include <fstream>

#include "core/errors.h"
#include "tune/launch/sim/peer.h"

namespace tune::sim {
namespace {

namespace proto = protocol;

// Virtual time: how long a peer waits for a message the controller sent it.
constexpr std::chrono::milliseconds kTakeWait{60'000};

}  // namespace

std::string SimPeer::routing_id() const { return fmt::format("sim-{}", setup_.pid); }

void SimPeer::on_readable() {
  zmq::message_t frame;
  while (socket_ && socket_->recv(frame, zmq::recv_flags::dontwait)) on_frame(frame);
}

void SimPeer::take_one() {
  zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
  zmq::message_t frame;
  if (zmq::poll(&item, 1, kTakeWait) == 0 || !socket_->recv(frame, zmq::recv_flags::dontwait)) {
    throw Error(
        fmt::format("{}: no message from the controller within {} s, though it says "
                    "it sent one",
                    routing_id(), kTakeWait.count() / 1000));
  }
  on_frame(frame);
}

void SimPeer::on_frame(const zmq::message_t& frame) {
  if (state_ == State::kHung) return;  // stopped: what comes is never read
  try {
    proto::Message message = proto::decode(frame.to_string_view());
    if (state_ == State::kComputing) {
      inbox_.push_back(std::move(message));
    } else {
      handle(message);
    }
  } catch (const Error& e) {  // as a rank's runtime: its trial's ERROR
    fail(e.what());
  }
}

// Beats on its own socket every heartbeat_s, for the trial it runs now; the
// socket connects when the first beat is due, as a real rank's does.
void SimPeer::beat() {
  if (!heartbeat_) {
    heartbeat_.emplace(world_.zmq, zmq::socket_type::dealer);
    heartbeat_->set(zmq::sockopt::linger, 0);
    train::make_curve_client(*heartbeat_, setup_.env.curve_server_key, setup_.env.curve_keys);
    heartbeat_->connect(setup_.env.controller);
  }
  const std::string bytes =
      proto::encode(proto::Heartbeat{setup_.env.trial_id, setup_.env.rank, setup_.env.attempt});
  heartbeat_->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  beat_timer_ = world_.events.after(setup_.env.heartbeat_s, [this] { beat(); });
}

void SimPeer::send(const proto::Message& message) {
  const std::string bytes = proto::encode(message);
  socket_->send(zmq::buffer(bytes), zmq::send_flags::none);
  world_.on_sent(*this);
}

void SimPeer::log(const std::string& line, const std::filesystem::path& file) {
  if (file.empty()) return;
  std::ofstream(file, std::ios::app) << line << "\n";
}

}  // namespace tune::sim
