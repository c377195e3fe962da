// What a train function calls inside a worker (train/session.h) over the
// live session of its trial (train/internal/worker_session.h): report(),
// the context and checkpoint calls, and the controller's decisions on the
// reports, applied when the next report (or should_checkpoint) comes.
#include "train/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "core/errors.h"
#include "storage/checkpoint_layout.h"
#include "train/internal/worker_session.h"

namespace train {

namespace detail {

Session* g_session = nullptr;
std::optional<tune::protocol::Start> g_restart;
std::optional<tune::protocol::Start> g_next;

void send(zmq::socket_t& socket, const tune::protocol::Message& message) {
  std::string bytes = tune::protocol::encode(message);
  socket.send(zmq::buffer(bytes), zmq::send_flags::none);
}

tune::protocol::Message receive(zmq::socket_t& socket) {
  zmq::message_t frame;
  if (!socket.recv(frame)) throw tune::ProtocolError("no message from the controller");
  return tune::protocol::decode(frame.to_string_view());
}

}  // namespace detail

namespace {

namespace proto = tune::protocol;
using detail::Clock;
using detail::g_next;
using detail::g_restart;
using detail::g_session;
using detail::receive;
using detail::send;
using detail::Session;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
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

}  // namespace train
