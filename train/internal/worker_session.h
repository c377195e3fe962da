// The live session of the trial a worker process runs: the state that
// report(), get_context() and the checkpoint calls (train/session.h) reach,
// and the messages on the rank's socket. train/session.cpp owns the session
// and applies the controller's decisions to it; train/worker_runtime.cpp
// opens one per trial; the heartbeat (train/internal/heartbeat.h) sends on
// a socket of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <zmq.hpp>

#include "core/protocol.h"
#include "train/checkpoint.h"
#include "train/session.h"

namespace train::detail {

using Clock = std::chrono::steady_clock;

void send(zmq::socket_t& socket, const tune::protocol::Message& message);
// Throws tune::ProtocolError when no message comes.
tune::protocol::Message receive(zmq::socket_t& socket);

struct Session {
  zmq::socket_t* socket = nullptr;
  Context context;
  int64_t iteration = 0;  // starts at START's start_iteration
  bool pipelined = true;  // reports without a checkpoint do not wait for their decision
  bool awaiting = false;  // the decision on report `iteration` is still to be received
  // The lease (DecisionMsg::continue_through): the reports up to here get no
  // decision unless one says stop or pause.
  int64_t continue_through = 0;
  // The checkpoint lease (DecisionMsg::checkpoint_through): should_checkpoint()
  // is false up to here.
  int64_t checkpoint_through = 0;
  std::optional<Checkpoint> resume_from;
  int64_t scratch_dirs = 0;  // make_checkpoint_dir() calls so far
  Clock::time_point started = Clock::now();
  Clock::time_point last_report = started;
};

// The session of the trial this process runs, set by the worker runtime
// while the train function runs; nullptr outside a trial.
extern Session* g_session;
// A START that reached this rank while it was suspended: the trial restarts
// (from a checkpoint, maybe with another config) instead of going on in
// place. run_worker runs it once the function has unwound.
extern std::optional<tune::protocol::Start> g_restart;
// A START for another trial that reached this rank while a trial ran: the
// controller handed it the trial to run next, ahead of this one's end. It
// runs right after DONE, without waiting for the controller.
extern std::optional<tune::protocol::Start> g_next;

}  // namespace train::detail
