#include "train/worker_runtime.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <zmq.hpp>

#include "core/protocol.h"
#include "storage/checkpoint_layout.h"
#include "train/external_command.h"
#include "train/node_ranks.h"
#include "train/plugin.h"
#include "train/session.h"
#include "train/trainable.h"
#include "train/worker_env.h"

namespace train {
namespace {

namespace proto = tune::protocol;
using Clock = std::chrono::steady_clock;

// Long enough for the last DONE/ERROR to leave before the process exits.
constexpr int kLingerMs = 5000;
// How long a worker waits for START after HELLO before giving up.
constexpr auto kStartTimeout = std::chrono::seconds(60);

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The live session of this worker process: owned by run_worker, reached by
// report() and get_context() through `g_session`.
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
Session* g_session = nullptr;
// A START that reached this rank while it was suspended: the trial restarts
// (from a checkpoint, maybe with another config) instead of going on in
// place. run_worker runs it once the function has unwound.
std::optional<proto::Start> g_restart;
// A START for another trial that reached this rank while a trial ran: the
// controller handed it the trial to run next, ahead of this one's end. It
// runs right after DONE, without waiting for the controller.
std::optional<proto::Start> g_next;

void send(zmq::socket_t& socket, const proto::Message& message) {
  std::string bytes = proto::encode(message);
  socket.send(zmq::buffer(bytes), zmq::send_flags::none);
}

proto::Message receive(zmq::socket_t& socket) {
  zmq::message_t frame;
  if (!socket.recv(frame)) throw tune::ProtocolError("no message from the controller");
  return proto::decode(frame.to_string_view());
}

// Beats on its own socket for the trial this rank runs, so a long step in
// the train function never looks like a hang to the controller. One per
// worker process, kept across the trials a reused rank runs: a socket per
// trial would cost a CURVE handshake per trial. It connects when the first
// beat is due (every message of the rank counts as a sign of life until
// then): a rank whose trial is over sooner never opens it, so it is never
// killed halfway through that handshake (which the controller could not
// tell from an outsider's failed one).
class HeartbeatThread {
 public:
  HeartbeatThread(zmq::context_t& ctx, const WorkerEnv& env)
      : socket_(ctx, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    make_curve_client(socket_, env.curve_server_key, env.curve_keys);
    beat_ = proto::Heartbeat{env.trial_id, env.rank, env.attempt};
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
  ~HeartbeatThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  // A reused rank beats for its new trial from now on.
  void set_trial(const std::string& trial_id, int attempt) {
    std::lock_guard lock(mutex_);
    beat_.trial_id = trial_id;
    beat_.attempt = attempt;
  }

 private:
  zmq::socket_t socket_;
  std::mutex mutex_;
  std::condition_variable wake_;
  proto::Heartbeat beat_;
  bool stop_ = false;
  std::thread thread_;
};

// The first START. A spare rank (kSpareTrialId) waits for it as long as the
// controller lives; any other gives up after kStartTimeout.
proto::Start wait_for_start(zmq::socket_t& socket, bool spare) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  const auto timeout = spare ? std::chrono::milliseconds(-1)
                             : std::chrono::duration_cast<std::chrono::milliseconds>(kStartTimeout);
  if (zmq::poll(&item, 1, timeout) == 0) {
    throw tune::ProtocolError("the controller did not send START within 60 s");
  }
  proto::Message message = receive(socket);
  if (auto* start = std::get_if<proto::Start>(&message)) return std::move(*start);
  throw tune::ProtocolError(fmt::format("expected START, got {}", proto::type_name(message)));
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// "JOB.STEP" when this rank is a task of a Slurm job step.
std::string slurm_step() {
  const char* job = std::getenv("SLURM_JOB_ID");
  const char* step = std::getenv("SLURM_STEP_ID");
  return job != nullptr && step != nullptr ? fmt::format("{}.{}", job, step) : "";
}

// Where this rank runs among its group's hosts (one host unless the
// launcher spread the group: kEnvRankHosts).
NodeRanks placement(const WorkerEnv& env) {
  const char* hosts = std::getenv(kEnvRankHosts);
  return node_ranks(hosts != nullptr ? hosts : "", env.rank, env.world_size);
}

void set_torchrun_like_env(const WorkerEnv& env) {
  const NodeRanks placed = placement(env);
  // RANK too: a Slurm step's tasks share one environment (SLURM_PROCID tells them apart).
  setenv("RANK", std::to_string(env.rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(placed.local_rank).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(placed.local_world_size).c_str(), 1);
  setenv("GROUP_RANK", std::to_string(placed.node_rank).c_str(), 1);
}

// Suspended by a pause the controller keeps this rank for: says so, then
// waits (as long as the controller lives) for CONTINUE on the same iteration
// (resumed in place: the function goes on with its state; the paused time
// counts in neither time_this_iter_s nor time_total_s) or for a START,
// kept in g_restart while StopTrial unwinds the function.
void suspend(Session& s) {
  const auto since = Clock::now();
  send(*s.socket, proto::Done{s.iteration, true});
  while (true) {
    proto::Message message = receive(*s.socket);
    // This trial restarts (an exploit), or another takes these ranks.
    if (auto* start = std::get_if<proto::Start>(&message)) {
      g_restart = std::move(*start);
      throw detail::StopTrial{};
    }
    auto* resume = std::get_if<proto::DecisionMsg>(&message);
    if (resume != nullptr && resume->trial_id != s.context.trial_id) continue;  // the last trial's
    if (resume != nullptr && resume->iteration == s.iteration &&
        resume->decision == tune::Decision::kContinue) {
      const auto paused = Clock::now() - since;
      s.started += paused;
      s.last_report += paused;
      s.continue_through = std::max(s.continue_through, resume->continue_through);
      s.checkpoint_through = std::max(s.checkpoint_through, resume->checkpoint_through);
      return;
    }
    throw tune::ProtocolError(
        fmt::format("suspended at iteration {}, got {}", s.iteration, proto::type_name(message)));
  }
}

// Applies a decision on report `decision.iteration` (this one or an earlier
// one, whose decision came within the lease): extends the lease, or throws
// StopTrial (a suspend, at the iteration the rank waits on, returns when the
// trial resumes in place). A decision on the trial this rank ran before is
// dropped; a START for another trial is kept in g_next.
void apply_decision(Session& s, proto::Message& message) {
  if (auto* start = std::get_if<proto::Start>(&message);
      start != nullptr && start->trial_id != s.context.trial_id && !g_next) {
    g_next = std::move(*start);
    return;
  }
  auto* decision = std::get_if<proto::DecisionMsg>(&message);
  if (decision != nullptr && decision->trial_id != s.context.trial_id) return;
  if (decision == nullptr || decision->iteration > s.iteration) {
    throw tune::ProtocolError(fmt::format("expected DECISION for iteration {} at most, got {}",
                                          s.iteration, proto::type_name(message)));
  }
  s.continue_through = std::max(s.continue_through, decision->continue_through);
  s.checkpoint_through = std::max(s.checkpoint_through, decision->checkpoint_through);
  if (decision->iteration == s.iteration) s.awaiting = false;
  if (decision->decision == tune::Decision::kContinue) return;
  if (decision->decision == tune::Decision::kPause && decision->suspend &&
      decision->iteration == s.iteration) {
    return suspend(s);
  }
  throw detail::StopTrial{};
}

// Applies the decisions that have arrived, without waiting.
void take_decisions(Session& s) {
  zmq::message_t frame;
  while (s.socket->recv(frame, zmq::recv_flags::dontwait)) {
    proto::Message message = proto::decode(frame.to_string_view());
    apply_decision(s, message);
  }
}

// Waits for the decision on report `s.iteration`, applying earlier ones on
// the way.
void await_decision(Session& s) {
  while (s.awaiting) {
    proto::Message message = receive(*s.socket);
    apply_decision(s, message);
  }
}

// Before the next report: applies the decisions that arrived, and awaits
// the previous report's unless the lease covers it.
void catch_up(Session& s) {
  take_decisions(s);
  if (s.awaiting && s.iteration > s.continue_through) await_decision(s);
}

}  // namespace

const Context& get_context() {
  if (g_session == nullptr) throw tune::Error("train::get_context() called outside a worker");
  return g_session->context;
}

bool in_worker() { return g_session != nullptr; }

std::optional<Checkpoint> get_checkpoint() {
  if (g_session == nullptr) throw tune::Error("train::get_checkpoint() called outside a worker");
  return g_session->resume_from;
}

std::filesystem::path make_checkpoint_dir() {
  if (g_session == nullptr) {
    throw tune::Error("train::make_checkpoint_dir() called outside a worker");
  }
  Session& s = *g_session;
  auto dir =
      tune::storage::scratch_dir(s.context.trial_dir, s.context.world_rank, s.scratch_dirs++);
  std::filesystem::create_directories(dir);
  return dir;
}

bool should_checkpoint() {
  if (g_session == nullptr) {
    throw tune::Error("train::should_checkpoint() called outside a worker");
  }
  Session& s = *g_session;
  // The checkpoint lease the next report runs under is known once the
  // decision on this one arrived (none comes within the lease, whose end the
  // checkpoint lease never precedes): it may extend it.
  catch_up(s);
  return s.iteration + 1 > s.checkpoint_through;
}

void report(const tune::Json& metrics, std::optional<Checkpoint> checkpoint,
            const ReportOptions& options) {
  if (g_session == nullptr) throw tune::Error("train::report() called outside a worker");
  if (!metrics.is_object()) {
    throw tune::Error(
        fmt::format("train::report() needs a table of metrics, got {}", metrics.dump()));
  }
  Session& s = *g_session;
  // Decisions that arrived apply before this iteration is sent.
  catch_up(s);
  const auto now = Clock::now();
  const int64_t iteration = s.iteration + 1;
  if (checkpoint) {
    tune::storage::stage_checkpoint(checkpoint->path(),
                                    tune::storage::staging_dir(s.context.trial_dir, iteration));
  }
  proto::Report message{iteration,
                        metrics,
                        seconds_between(s.last_report, now),
                        seconds_between(s.started, now),
                        checkpoint.has_value(),
                        options.reduce};
  s.iteration = iteration;
  send(*s.socket, message);
  s.awaiting = checkpoint || iteration > s.continue_through;
  if (checkpoint || !s.pipelined) await_decision(s);
  s.last_report = Clock::now();
}

namespace {

// Runs one trial's train function on this rank; returns the iterations done.
// Throws what the function throws (but not StopTrial: a stop is a normal end).
int64_t run_trial(zmq::socket_t& socket, const WorkerEnv& env, proto::Start start) {
  if (!start.library.empty()) load_trainable_library(start.library);
  // An external command trainable runs its command instead of a registered function.
  const TrainFunc* func = start.command.empty() ? find_trainable(start.trainable) : nullptr;
  if (func == nullptr && start.command.empty()) {
    throw tune::Error(fmt::format("no trainable named '{}' in {}; known: {}", start.trainable,
                                  start.library.empty() ? "this worker" : start.library,
                                  fmt::join(trainable_names(), ", ")));
  }
  Session session;
  session.socket = &socket;
  const NodeRanks placed = placement(env);
  session.context = Context{.world_rank = env.rank,
                            .world_size = start.world_size,
                            .local_rank = placed.local_rank,
                            .local_world_size = placed.local_world_size,
                            .node_rank = placed.node_rank,
                            .num_nodes = placed.num_nodes,
                            .trial_id = env.trial_id,
                            .trial_name = env.trial_id,
                            .trial_dir = start.trial_dir,
                            .experiment = start.experiment,
                            .attempt = env.attempt};
  session.iteration = start.start_iteration;
  session.continue_through = std::max(start.start_iteration, start.continue_through);
  session.checkpoint_through = std::max(start.start_iteration, start.checkpoint_through);
  session.pipelined = start.pipelined;
  if (!start.checkpoint.empty()) session.resume_from = Checkpoint::from_directory(start.checkpoint);
  g_session = &session;
  try {
    if (start.command.empty()) {
      (*func)(tune::Config(std::move(start.config)));
    } else {
      run_external_command(start.command, tune::Config(std::move(start.config)));
    }
    // The last report's decision is not awaited: the run is over whatever it
    // says, and DONE right behind the report lets the controller end the
    // trial (and start the next) in the turn that records the result. A
    // reused rank drops that decision when it comes (wait_for_next_trial;
    // apply_decision, by its trial id, once the next trial runs).
  } catch (const detail::StopTrial&) {
    // The controller stopped the trial at the last report: a normal end.
  } catch (...) {
    g_session = nullptr;
    throw;
  }
  g_session = nullptr;
  return session.iteration;
}

// The message of the exception being handled; for one that is not a
// std::exception, its type's name.
std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    int status = 0;
    char* name = type ? abi::__cxa_demangle(type->name(), nullptr, nullptr, &status) : nullptr;
    std::string text = fmt::format(
        "the train function threw an exception of type {}, "
        "which is not a std::exception",
        name ? name : (type ? type->name() : "unknown"));
    std::free(name);
    return text;
  }
}

// An idle reused rank's next START, or nullopt when none came in time (or
// the controller sent something else): the rank then exits. The decision on
// the last trial's last report, sent before DONE was read, is dropped.
std::optional<proto::Start> wait_for_next_trial(zmq::socket_t& socket) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  const auto deadline = Clock::now() + kStartTimeout;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || zmq::poll(&item, 1, left) == 0) return std::nullopt;
    proto::Message message = receive(socket);
    if (auto* start = std::get_if<proto::Start>(&message)) return std::move(*start);
    if (!std::holds_alternative<proto::DecisionMsg>(message)) return std::nullopt;
  }
}

// A reused rank takes on its next trial: its ids, rendezvous port and log file.
void adopt_trial(WorkerEnv& env, const proto::Start& start) {
  env.trial_id = start.trial_id;
  env.attempt = start.attempt;
  setenv(kEnvTrialId, start.trial_id.c_str(), 1);
  setenv(kEnvAttempt, std::to_string(start.attempt).c_str(), 1);
  if (start.master_port > 0) setenv("MASTER_PORT", std::to_string(start.master_port).c_str(), 1);
  if (!start.log_path.empty()) {
    std::fflush(nullptr);
    const int fd = ::open(start.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
  }
}

}  // namespace

int run_worker() {
  WorkerEnv env;
  try {
    env = WorkerEnv::from_environment();
    set_torchrun_like_env(env);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tunerun worker: {}\n", e.what());
    return 1;
  }
  // Die with the controller (or, in a Slurm job step, with its slurmstepd:
  // parent_pid 0); if it is already gone, do not start at all.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (env.parent_pid != 0 && getppid() != env.parent_pid) return 1;
  const char* reuse_env = std::getenv(kEnvReuse);
  const bool reuse = reuse_env != nullptr && std::string_view(reuse_env) == "1";

  zmq::context_t ctx(1);
  zmq::socket_t socket(ctx, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, kLingerMs);
  make_curve_client(socket, env.curve_server_key, env.curve_keys);
  socket.connect(env.controller);

  int exit_code = 0;
  try {
    HeartbeatThread heartbeat(ctx, env);
    send(socket,
         proto::Hello{env.trial_id, env.rank, env.attempt, getpid(), host_name(), slurm_step()});
    proto::Start start = wait_for_start(socket, env.trial_id == kSpareTrialId);
    if (start.trial_id != env.trial_id) {
      // A spare learns its trial from START.
      adopt_trial(env, start);
      heartbeat.set_trial(env.trial_id, env.attempt);
    }
    while (true) {
      const int64_t iterations = run_trial(socket, env, std::move(start));
      if (g_restart) {
        // Restarted while suspended: its DONE was said when it suspended.
        start = std::move(*std::exchange(g_restart, std::nullopt));
        adopt_trial(env, start);
        heartbeat.set_trial(env.trial_id, env.attempt);
        continue;
      }
      send(socket, proto::Done{iterations});
      if (!reuse) break;
      std::fflush(nullptr);
      // The next trial's START came while this one ran, or comes now.
      std::optional<proto::Start> next = std::exchange(g_next, std::nullopt);
      if (!next) next = wait_for_next_trial(socket);
      if (!next) break;
      start = std::move(*next);
      adopt_trial(env, start);
      heartbeat.set_trial(env.trial_id, env.attempt);
    }
  } catch (...) {
    // Anything a train function throws, std::exception or not, is its
    // trial's ERROR with a message (not an abort the controller sees as a signal).
    const std::string where = fmt::format("rank {} of trial {}", env.rank, env.trial_id);
    const std::string what = describe_current_exception();
    fmt::print(stderr, "tunerun worker ({}): {}\n", where, what);
    send(socket, proto::ErrorMsg{what, where});
    exit_code = 1;
  }
  std::fflush(stdout);
  return exit_code;
}

}  // namespace train
