// SimPeer: one simulated rank. Not a process but a state machine in the
// peers' process (tune/launch/sim/peer_host.h) that holds what a rank holds on the
// wire: a DEALER socket with the CURVE keypair its KeyedLauncher wrote
// (read from the key file its environment names, as train::WorkerEnv reads
// it), a second one for heartbeats, and the conversation of
// core/protocol.h, as train/worker_runtime.cpp holds it: HELLO, START, a
// REPORT per iteration (pipelined, within leases, or awaiting its
// DECISION), checkpoints staged as train/checkpoint.h says, STOP, PAUSE
// (suspended in place, or the run ends), restarts from a checkpoint, DONE
// and the next START of a reused rank, a START handed ahead, ERROR.
//
// What it computes is the curve [simulation] names (tune/launch/sim/trial_curve.h:
// the learning_curve built-in's model by default, a parametric family, or a
// table's rows), whatever the trainable: the metrics of each iteration from
// the trial's config; its checkpoint ({"t": t}, written by rank 0) and its
// injected failures (fail_at, crash_at, hang_at, vanish_at) are the
// learning_curve built-in's. An iteration lasts the table's epoch_s, else
// the config's sleep_s, else [simulation] iteration_s, times the jitter; a
// late report adds late_report_s. Every wait is an event of the host's
// EventQueue: the peer never sleeps. Its random draws come from its own
// generator, seeded from [simulation] seed and its pid, so they do not
// depend on other peers.
//
// In virtual time (PeerWorld::virtual_time) its connection is named by its
// pid (routing_id), it never beats (the controller does not expect beats
// then), a hung one is killed after heartbeat_timeout_s, and the host hands
// it the controller's messages one at a time (take_one), in the order the
// controller sent them.
//
// Not thread-safe; owned by the peers' event loop.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <zmq.hpp>

#include "core/protocol.h"
#include "train/worker_env.h"
#include "tune/launch/process.h"
#include "tune/launch/sim/event_queue.h"
#include "tune/launch/sim/trial_curve.h"
#include "tune/spec/experiment.h"

namespace tune::sim {

class SimPeer;

// What every peer shares: the host's ZeroMQ context and schedule, the
// simulation, and where a peer's end goes.
struct PeerWorld {
  zmq::context_t& zmq;
  EventQueue& events;
  const SimulationSpec& simulation;
  // Called once, when the peer ends: its exit status and, when its node was
  // lost, why. The peer may be destroyed after the call returns.
  std::function<void(const SimPeer&, const ExitStatus&, const std::string& node_lost)> on_exit;
  // Called when the peer starts running a trial (a START) or stops (DONE,
  // and it waits: reused, or suspended): an idle simulated rank holds no
  // CPUs on its node.
  std::function<void(const SimPeer&, bool busy)> on_busy;
  // Called after each control message the peer sent (virtual time lists them).
  std::function<void(const SimPeer&)> on_sent;
  // [simulation] curve_table, loaded when the first trial needs it.
  std::shared_ptr<const CurveTable> curve_table = nullptr;

  // Virtual time ([simulation] time): a peer names its connection
  // (routing_id), beats not, and a silent one is killed after
  // heartbeat_timeout_s instead of missing beats.
  bool virtual_time() const { return simulation.virtual_time(); }
};

struct PeerSetup {
  int64_t group = 0;  // the launcher's group
  int64_t pid = 0;    // what its HELLO names
  int node = 0;       // the index of its node
  std::string host;   // its node's name
  train::WorkerEnv env;
  bool reuse = false;              // it waits for another START after DONE
  std::filesystem::path log_file;  // a line when it starts, and for each trial it runs
};

class SimPeer {
 public:
  // Connects and says HELLO.
  SimPeer(PeerWorld& world, PeerSetup setup);
  ~SimPeer();
  SimPeer(const SimPeer&) = delete;
  SimPeer& operator=(const SimPeer&) = delete;

  int64_t group() const { return setup_.group; }
  int rank() const { return setup_.env.rank; }
  int node() const { return setup_.node; }
  bool exited() const { return state_ == State::kExited; }
  // Its control socket, to poll; null once it exited.
  void* socket_handle() { return socket_ ? socket_->handle() : nullptr; }
  // The routing id its control connection has in virtual time: unique per
  // controller run (its pid), the same in every run.
  std::string routing_id() const;

  // Takes the messages that arrived on its control socket.
  void on_readable();
  // Virtual time: takes the next message on its control socket, waiting
  // for it. Throws Error when none comes within a minute.
  void take_one();
  // It is killed by `signal` now (with `node_lost`: its node went with it);
  // a peer already gone is no error.
  void kill(int signal, const std::string& node_lost = {});

 private:
  enum class State {
    kAwaitStart,  // said HELLO (or DONE, reused: kIdle), waits for START
    kComputing,   // an iteration is under way; messages wait for the next report
    kRunning,     // between an iteration and the next: reporting, applying decisions
    kAwaiting,    // waits for the decision on its last report
    kSuspended,   // paused in place: waits for CONTINUE or START
    kIdle,        // a reused rank after DONE: waits for the next START
    kHung,        // silent: neither reports nor beats (hang_at)
    kExited,
  };
  // Where the train function is within an iteration.
  enum class Phase { kBeforeReport, kAfterReport };
  // What a decision does to the run.
  enum class Outcome { kGoOn, kStop, kSuspend };

  // One START's run: train/worker_runtime.cpp's Session.
  struct Run {
    protocol::Start start;
    TrialCurve curve;
    int64_t iteration = 0;    // the last reported (start_iteration at first)
    int64_t t = 1;            // the curve's next iteration
    bool awaiting = false;    // the decision on `iteration` is still to come
    bool must_await = false;  // ... and this report waits for it (checkpoint, not pipelined)
    int64_t continue_through = 0;
    int64_t checkpoint_through = 0;
    int64_t scratch_dirs = 0;
    Clock::time_point started;
    Clock::time_point last_report;
    Clock::time_point suspended_at;
  };

  void on_frame(const zmq::message_t& frame);
  void handle(protocol::Message& message);
  void begin(protocol::Start start);
  void compute();
  void computed();
  void report_computed();
  void proceed();
  void send_report();
  Outcome apply(protocol::Message& message);
  void act(Outcome outcome);
  void suspend();
  void end_run();
  void fail(const std::string& what);
  void exit(const ExitStatus& status, const std::string& node_lost = {});
  void beat();
  void send(const protocol::Message& message);
  void set_busy(bool busy);
  void log(const std::string& line, const std::filesystem::path& file);
  double draw_duration();
  const CurveTable* curve_table();

  PeerWorld& world_;
  PeerSetup setup_;
  std::mt19937_64 rng_;
  std::optional<zmq::socket_t> socket_;
  std::optional<zmq::socket_t> heartbeat_;  // connected when the first beat is due
  State state_ = State::kAwaitStart;
  bool busy_ = true;  // runs a trial, or was started for one (a spare waits idle)
  Phase phase_ = Phase::kBeforeReport;
  std::optional<Run> run_;
  std::deque<protocol::Message> inbox_;  // arrived while computing
  std::optional<protocol::Start> next_;  // a START handed ahead while a trial ran
  EventQueue::Id timer_ = 0;             // the iteration's end, or a wait's deadline
  EventQueue::Id beat_timer_ = 0;
  EventQueue::Id death_timer_ = 0;
};

}  // namespace tune::sim
