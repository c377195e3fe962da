// ZapHandler: who may connect to the control channel. ZeroMQ asks the ZAP
// handler of a context (RFC 27, a REP socket at inproc://zeromq.zap.01)
// about every CURVE client that completed its handshake; this one accepts
// the clients presenting an allowed public key (the experiment's workers,
// train/curve.h) and refuses every other. It also watches the server socket
// for peers that fail the handshake before ZAP is asked (no CURVE at all, or
// not the controller's key). Refusals are kept for take_refusals(): the
// controller logs them; a refused peer never gets a message through.
//
// A thread of its own (ZeroMQ calls ZAP while the controller may be busy);
// one per context. The constructor must run before the socket binds.
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace tune {

class ZapHandler {
 public:
  ZapHandler(zmq::context_t& context, zmq::socket_t& server,
             std::vector<std::string> allowed_public_keys);
  ~ZapHandler();  // stops the thread

  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Why each peer was refused since the last call, oldest first.
  std::vector<std::string> take_refusals();

 private:
  void serve(zmq::socket_t zap, zmq::socket_t monitor, zmq::socket_t stop);
  void answer(zmq::socket_t& zap);
  void note_handshake_failure(zmq::socket_t& monitor);
  void refuse(std::string why);

  std::vector<std::string> allowed_;
  zmq::socket_t stop_;  // a byte on it ends the thread
  std::mutex mutex_;
  std::vector<std::string> refusals_;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace tune
