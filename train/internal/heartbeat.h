// The heartbeat of a worker process (train/worker_runtime.cpp): beats on
// its own socket for the trial this rank runs, so a long step in the train
// function never looks like a hang to the controller.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "core/protocol.h"
#include "train/worker_env.h"

namespace train::detail {

// One per worker process, kept across the trials a reused rank runs: a
// socket per trial would cost a CURVE handshake per trial. It connects when
// the first beat is due (every message of the rank counts as a sign of life
// until then): a rank whose trial is over sooner never opens it, so it is
// never killed halfway through that handshake (which the controller could
// not tell from an outsider's failed one).
class HeartbeatThread {
 public:
  HeartbeatThread(zmq::context_t& ctx, const WorkerEnv& env);
  // Stops beating and joins the thread.
  ~HeartbeatThread();
  // A reused rank beats for its new trial from now on.
  void set_trial(const std::string& trial_id, int attempt);

 private:
  zmq::socket_t socket_;
  std::mutex mutex_;
  std::condition_variable wake_;
  tune::protocol::Heartbeat beat_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace train::detail
