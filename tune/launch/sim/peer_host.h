// PeerHost: the process of the simulated peers (tunerun-sim, started by the
// SimLauncher, tune/launch/sim/launcher.h). One event loop holds every
// simulated rank (tune/launch/sim/peer.h) and node: it polls the launcher's
// channel (tune/launch/sim/wire.h) and every peer's control socket, and runs
// what the one EventQueue says is due. No thread per peer; ZeroMQ's one I/O
// thread carries every connection.
//
// From the launcher it takes launches (a SimPeer per rank, on the node the
// launcher placed it), signals (the group's live ranks die of them) and
// node losses; it sends back every rank's exit and each node lost or back.
// Nodes are lost at random too ([simulation] node_loss_rate, drawn from the
// simulation's seed) and come back node_recovery_s later.
//
// In virtual time ([simulation] time = "virtual") the host never waits for
// time: its "now" moves only on the launcher's "advance" (sim_wire.h). It
// first takes, in the order the controller sent them, the control messages
// the advance lists; then, unless something happened that the controller
// has not heard yet (time moves on only once it has), moves now to its
// next event or the controller's deadline, whichever is first, runs what
// is due then; and answers with
// the new now and, in order, everything that happened since the last
// answer: each control message a peer sent (by its routing id), each exit,
// busy and node event. What a peer sent before a "signal" or "lose" killed
// it in the same step is left out of the list: the controller may have
// revoked its key, so that it never arrives.
//
// Single-threaded; run() returns when the launcher closes its end.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "core/config.h"
#include "tune/launch/sim/event_queue.h"
#include "tune/launch/sim/peer.h"

namespace tune::sim {

class PeerHost {
 public:
  // `fd`: this end of the launcher's socketpair.
  explicit PeerHost(int fd);

  // Serves the launcher until it closes its end. Throws Error when the
  // channel fails otherwise.
  void run();

 private:
  void serve_real();
  void serve_virtual();
  void advance(const Json& message);
  // Leaves out of the next answer what the peers `killed` sent.
  void unsay(const std::vector<std::string>& killed);
  void on_message(const Json& message);
  void launch(const Json& message);
  void start_rank(int64_t group, const Json& group_env, const Json& rank);
  // Both return the routing ids of the peers they killed.
  std::vector<std::string> signal_group(int64_t group, int signal);
  std::vector<std::string> lose_node(int node, const std::string& why);
  void node_back(int node);
  void schedule_loss(int node);
  void on_exit(const SimPeer& peer, const ExitStatus& status, const std::string& node_lost);
  void post_exit(int64_t group, int rank, const ExitStatus& status, const std::string& node_lost);
  // Sends at once when nothing waits before it: a rank's exit or idleness
  // reaches the launcher before what the rank sends the controller next.
  void post(Json message);
  void flush();
  int next_timeout_ms();

  int fd_;
  SimulationSpec simulation_;
  std::vector<std::string> node_names_;
  std::vector<bool> node_up_;
  std::mt19937_64 node_rng_;  // the nodes' losses
  zmq::context_t zmq_{1};
  EventQueue events_;
  PeerWorld world_;
  std::map<std::pair<int64_t, int>, std::unique_ptr<SimPeer>> peers_;  // by (group, rank)
  std::deque<Json> outbox_;  // to the launcher, sent as its socket takes them
  bool closed_ = false;      // the launcher closed its end
  bool virtual_ = false;     // virtual time: now_ is now
  Clock::time_point now_ = kVirtualStart;
  Json happened_ = Json::array();  // virtual time: what the next answer lists
  std::unordered_map<std::string, SimPeer*> by_routing_id_;  // virtual time
};

}  // namespace tune::sim
