// ZapHandler: who may connect to the control channel. ZeroMQ asks the ZAP
// handler of a context (RFC 27, a REP socket at inproc://zeromq.zap.01)
// about every CURVE client that completed its handshake; this one accepts
// the clients presenting a public key admitted now (each launched rank's own,
// tune/channel/rank_keys.h), names the connection by that key (ZeroMQ's "User-Id"
// property of every message it sends), and refuses every other. It also
// watches the server socket for peers that fail the handshake before ZAP is
// asked (no CURVE at all, or not the controller's key). Refusals are kept,
// each with the peer's address, for take_refusals(): the controller logs
// them; a refused peer never gets a message through.
//
// A peer that fails the handshake is known to ZAP by no address: the
// socket monitor names only the socket's own endpoint. Its address comes
// from the connection's file descriptor (getpeername when ZeroMQ reports
// the connection accepted), matched to the failure by the disconnection
// that follows it at once on the same I/O thread.
//
// A thread of its own (ZeroMQ calls ZAP while the controller may be busy);
// one per context. The constructor must run before the socket binds.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#include <zmq.hpp>

namespace tune {

// A connection refused, and why. `ended_group`: it presented the key of a
// rank whose group has ended, most often that rank's own late connection
// (a short trial's rank killed while its heartbeat socket was still
// connecting), not an outsider's.
struct Refusal {
  std::string address;  // the peer's IP address; empty when it could not be learnt
  std::string why;
  bool ended_group = false;
};

class ZapHandler {
 public:
  // Admits no key until admit().
  ZapHandler(zmq::context_t& context, zmq::socket_t& server);
  ~ZapHandler();  // stops the thread

  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Accepts handshakes with `public_key` (Z85) from now on, until revoke();
  // connections already made are not affected either way.
  void admit(const std::string& public_key);
  void revoke(const std::string& public_key);

  // The peers refused since the last call, oldest first.
  std::vector<Refusal> take_refusals();

 private:
  void serve(zmq::socket_t zap, zmq::socket_t monitor, zmq::socket_t stop);
  void answer(zmq::socket_t& zap);
  void on_monitor_event(zmq::socket_t& monitor);
  void refuse(Refusal refusal);

  zmq::socket_t stop_;  // a byte on it ends the thread
  std::mutex mutex_;
  std::unordered_set<std::string> admitted_;  // guarded by mutex_
  std::unordered_set<std::string> revoked_;   // guarded by mutex_; the latest kMaxRevoked
  std::deque<std::string> revoked_order_;     // guarded by mutex_; oldest first
  std::vector<Refusal> refusals_;             // guarded by mutex_
  // The serving thread's own: the address of each accepted connection by
  // its file descriptor, and a handshake failure waiting for the
  // disconnection that names its connection.
  std::unordered_map<int, std::string> accepted_;
  std::optional<std::string> failed_handshake_;
  std::thread thread_;
};

}  // namespace tune
