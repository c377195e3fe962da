// The worker process's life (train/worker_runtime.h): HELLO, the trials it
// runs one after another (a reused rank), DONE or ERROR. The session a
// trial runs in is train/session.cpp's; the heartbeat is
// train/internal/heartbeat.h's.
#include "train/worker_runtime.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <zmq.hpp>

#include "core/protocol.h"
#include "train/external_command.h"
#include "train/internal/heartbeat.h"
#include "train/internal/worker_session.h"
#include "train/node_ranks.h"
#include "train/plugin.h"
#include "train/session.h"
#include "train/trainable.h"
#include "train/worker_env.h"

namespace train {
namespace {

namespace proto = tune::protocol;
// The session's state and messages (train/internal/worker_session.h) and
// the heartbeat (train/internal/heartbeat.h).
using namespace detail;

// Long enough for the last DONE/ERROR to leave before the process exits.
constexpr int kLingerMs = 5000;
// How long a worker waits for START after HELLO before giving up.
constexpr auto kStartTimeout = std::chrono::seconds(60);

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
  if (const char* named = std::getenv(kEnvNodeName); named != nullptr && *named != '\0') {
    return named;
  }
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