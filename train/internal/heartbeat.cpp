// The heartbeat thread of a worker process (train/internal/heartbeat.h).
#include "train/internal/heartbeat.h"

#include <chrono>

#include "train/channel_keys.h"
#include "train/internal/worker_session.h"

namespace train::detail {

HeartbeatThread::HeartbeatThread(zmq::context_t& ctx, const WorkerEnv& env)
    : socket_(ctx, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  make_curve_client(socket_, env.curve_server_key, env.curve_keys);
  beat_ = tune::protocol::Heartbeat{env.trial_id, env.rank, env.attempt};
  const auto period = std::chrono::duration<double>(env.heartbeat_s);
  thread_ = std::thread([this, period, endpoint = env.controller] {
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, period, [this] { return stop_; })) return;
    socket_.connect(endpoint);
    while (!stop_) {
      send(socket_, beat_);
      wake_.wait_for(lock, period, [this] { return stop_; });
    }
  });
}

HeartbeatThread::~HeartbeatThread() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void HeartbeatThread::set_trial(const std::string& trial_id, int attempt) {
  std::lock_guard lock(mutex_);
  beat_.trial_id = trial_id;
  beat_.attempt = attempt;
}

}  // namespace train::detail
