#include "tune/launch/sim/peer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <csignal>

#include "storage/checkpoint_layout.h"

namespace tune::sim {
namespace {

namespace proto = protocol;

// As train/worker_runtime.cpp: the last DONE or ERROR leaves before the
// socket goes; a rank waits this long for a START.
constexpr int kLingerMs = 5000;
constexpr double kStartTimeoutS = 60;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The seed of one peer's draws: the simulation's, mixed with its pid.
uint64_t peer_seed(uint64_t seed, int64_t pid) {
  std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                         static_cast<uint32_t>(pid), static_cast<uint32_t>(pid >> 32)};
  std::array<uint32_t, 2> words{};
  sequence.generate(words.begin(), words.end());
  return (static_cast<uint64_t>(words[0]) << 32) | words[1];
}

ExitStatus exited_with(int code) { return {.code = code}; }
ExitStatus killed_by(int signal) { return {.signal = signal, .signaled = true}; }

}  // namespace

SimPeer::SimPeer(PeerWorld& world, PeerSetup setup)
    : world_(world), setup_(std::move(setup)), rng_(peer_seed(world.simulation.seed, setup_.pid)) {
  log(fmt::format("simulated rank {} of {} (pid {}) on node {}", setup_.env.rank,
                  setup_.env.trial_id, setup_.pid, setup_.host),
      setup_.log_file);
  socket_.emplace(world_.zmq, zmq::socket_type::dealer);
  socket_->set(zmq::sockopt::linger, kLingerMs);
  if (world_.virtual_time()) socket_->set(zmq::sockopt::routing_id, routing_id());
  train::make_curve_client(*socket_, setup_.env.curve_server_key, setup_.env.curve_keys);
  socket_->connect(setup_.env.controller);
  send(proto::Hello{setup_.env.trial_id, setup_.env.rank, setup_.env.attempt, setup_.pid,
                    setup_.host, ""});
  if (!world_.virtual_time()) {
    beat_timer_ = world_.events.after(setup_.env.heartbeat_s, [this] { beat(); });
  }
  if (world_.simulation.rank_death_rate > 0) {
    std::exponential_distribution<double> lifetime(world_.simulation.rank_death_rate / 3600);
    death_timer_ = world_.events.after(lifetime(rng_), [this] { kill(SIGKILL); });
  }
  // A spare waits for its START as long as the controller lives.
  busy_ = setup_.env.trial_id != train::kSpareTrialId;
  if (busy_) {
    timer_ = world_.events.after(kStartTimeoutS, [this] {
      fail(fmt::format("the controller did not send START within {} s", kStartTimeoutS));
    });
  }
}

SimPeer::~SimPeer() {
  world_.events.cancel(timer_);
  world_.events.cancel(beat_timer_);
  world_.events.cancel(death_timer_);
}

void SimPeer::kill(int signal, const std::string& node_lost) {
  if (state_ != State::kExited) exit(killed_by(signal), node_lost);
}

// ---- the conversation ---------------------------------------------------------

// A message the peer is waiting for (it is not computing). Throws
// ProtocolError for one the rank would refuse.
void SimPeer::handle(proto::Message& message) {
  switch (state_) {
    case State::kAwaitStart:
    case State::kIdle:
      if (auto* start = std::get_if<proto::Start>(&message)) return begin(std::move(*start));
      // An idle rank drops the decision on its last trial's last report, and
      // exits on anything else (train/worker_runtime.cpp: wait_for_next_trial).
      if (state_ == State::kIdle) {
        if (!std::holds_alternative<proto::DecisionMsg>(message)) exit(exited_with(0));
        return;
      }
      throw ProtocolError(fmt::format("expected START, got {}", proto::type_name(message)));
    case State::kAwaiting: {
      const Outcome outcome = apply(message);
      if (outcome != Outcome::kGoOn) return act(outcome);
      if (!run_->awaiting) {
        state_ = State::kRunning;
        proceed();
      }
      return;
    }
    case State::kSuspended: {
      // The trial restarts (an exploit), or another takes these ranks: its
      // DONE was said when it suspended.
      if (auto* start = std::get_if<proto::Start>(&message)) return begin(std::move(*start));
      auto* resume = std::get_if<proto::DecisionMsg>(&message);
      if (resume != nullptr && resume->trial_id != run_->start.trial_id) return;
      if (resume != nullptr && resume->iteration == run_->iteration &&
          resume->decision == Decision::kContinue) {
        // The paused time counts in neither time_this_iter_s nor time_total_s.
        const auto paused = world_.events.now() - run_->suspended_at;
        run_->started += paused;
        run_->last_report += paused;
        run_->continue_through = std::max(run_->continue_through, resume->continue_through);
        run_->checkpoint_through = std::max(run_->checkpoint_through, resume->checkpoint_through);
        state_ = State::kRunning;
        return proceed();
      }
      throw ProtocolError(fmt::format("suspended at iteration {}, got {}", run_->iteration,
                                      proto::type_name(message)));
    }
    default:
      return;
  }
}

// A START: a run of the trial it names (this rank's, or another's when
// reused, handed ahead, or restarted while suspended).
void SimPeer::begin(proto::Start start) {
  world_.events.cancel(std::exchange(timer_, 0));
  set_busy(true);
  setup_.env.trial_id = start.trial_id;
  setup_.env.attempt = start.attempt;
  if (!start.log_path.empty()) {
    log(fmt::format("simulated rank {} runs {} attempt {}", setup_.env.rank, start.trial_id,
                    start.attempt),
        start.log_path);
  }
  Run& run = run_.emplace();
  run.start = std::move(start);
  run.iteration = run.start.start_iteration;
  run.continue_through = std::max(run.start.start_iteration, run.start.continue_through);
  run.checkpoint_through = std::max(run.start.start_iteration, run.start.checkpoint_through);
  run.started = run.last_report = world_.events.now();
  phase_ = Phase::kAfterReport;
  try {
    run.curve = TrialCurve(world_.simulation, Config(run.start.config), curve_table());
  } catch (const Error& e) {
    return fail(e.what());
  }
  if (!run.start.checkpoint.empty()) {
    try {
      run.t = train::read_curve_checkpoint(run.start.checkpoint) + 1;
    } catch (const Error& e) {
      return fail(e.what());
    }
  }
  compute();
}

// The next iteration, or the train function's end.
void SimPeer::compute() {
  if (run_->t > run_->curve.iterations()) return end_run();
  state_ = State::kComputing;
  timer_ = world_.events.after(draw_duration(), [this] { computed(); });
}

// Iteration t is computed: the injected failures strike (first attempts
// only, so that a restart can succeed), else it is reported.
void SimPeer::computed() {
  timer_ = 0;
  try {
    report_computed();
  } catch (const Error& e) {
    fail(e.what());
  }
}

void SimPeer::report_computed() {
  const auto& curve = run_->curve.keys();
  const int64_t t = run_->t;
  if (setup_.env.attempt == 0) {
    if (t == curve.fail_at) return fail(fmt::format("injected failure at iteration {}", t));
    if (t == curve.crash_at) return exit(exited_with(3));
    if (t == curve.vanish_at) return exit(exited_with(0));  // gone without a word
    if (t == curve.hang_at) {
      state_ = State::kHung;
      world_.events.cancel(beat_timer_);
      // Virtual ranks do not beat: the silence the controller would notice
      // ends as the controller would end it.
      if (world_.virtual_time()) {
        timer_ = world_.events.after(world_.simulation.heartbeat_timeout_s, [this] {
          log(fmt::format("simulated rank {} silent for {} s: killed", setup_.env.rank,
                          world_.simulation.heartbeat_timeout_s),
              setup_.log_file);
          kill(SIGKILL);
        });
      }
      return;
    }
  }
  state_ = State::kRunning;
  phase_ = Phase::kBeforeReport;
  proceed();
}

// Goes on from where the train function is, until it waits: applies the
// decisions that arrived while it computed, awaits the last report's when
// beyond the lease, reports, awaits this one's when it must, computes on.
void SimPeer::proceed() {
  while (state_ == State::kRunning) {
    if (phase_ == Phase::kBeforeReport) {
      if (!inbox_.empty()) {
        proto::Message message = std::move(inbox_.front());
        inbox_.pop_front();
        act(apply(message));
        continue;
      }
      if (run_->awaiting && run_->iteration > run_->continue_through) {
        state_ = State::kAwaiting;
        return;
      }
      send_report();
      continue;
    }
    if (run_->must_await && run_->awaiting) {
      state_ = State::kAwaiting;
      return;
    }
    run_->must_await = false;
    run_->last_report = world_.events.now();
    return compute();
  }
}

void SimPeer::send_report() {
  Run& run = *run_;
  const int64_t iteration = run.iteration + 1;
  // train::should_checkpoint: beyond the checkpoint lease.
  const train::LearningCurve& keys = run.curve.keys();
  const bool checkpoint = keys.checkpoints_at(run.t) ||
                          (keys.checkpoint_for_scheduler && iteration > run.checkpoint_through);
  if (checkpoint) {
    const std::filesystem::path trial_dir = run.start.trial_dir;
    const auto dir = storage::scratch_dir(trial_dir, setup_.env.rank, run.scratch_dirs++);
    std::filesystem::create_directories(dir);
    if (setup_.env.rank == 0) train::write_curve_checkpoint(dir, run.t);
    storage::stage_checkpoint(dir, storage::staging_dir(trial_dir, iteration));
  }
  const auto now = world_.events.now();
  send(proto::Report{iteration,
                     run.curve.metrics(run.t),
                     seconds_between(run.last_report, now),
                     seconds_between(run.started, now),
                     checkpoint,
                     {}});
  run.iteration = iteration;
  ++run.t;
  run.awaiting = checkpoint || iteration > run.continue_through;
  run.must_await = checkpoint || !run.start.pipelined;
  phase_ = Phase::kAfterReport;
}

// A decision on report `iteration` (this one or an earlier one, whose
// decision came within the lease), as train/worker_runtime.cpp's
// apply_decision. A START for another trial is kept for after this one.
SimPeer::Outcome SimPeer::apply(proto::Message& message) {
  Run& run = *run_;
  if (auto* start = std::get_if<proto::Start>(&message);
      start != nullptr && start->trial_id != run.start.trial_id && !next_) {
    next_ = std::move(*start);
    return Outcome::kGoOn;
  }
  auto* decision = std::get_if<proto::DecisionMsg>(&message);
  if (decision != nullptr && decision->trial_id != run.start.trial_id) return Outcome::kGoOn;
  if (decision == nullptr || decision->iteration > run.iteration) {
    throw ProtocolError(fmt::format("expected DECISION for iteration {} at most, got {}",
                                    run.iteration, proto::type_name(message)));
  }
  run.continue_through = std::max(run.continue_through, decision->continue_through);
  run.checkpoint_through = std::max(run.checkpoint_through, decision->checkpoint_through);
  if (decision->iteration == run.iteration) run.awaiting = false;
  if (decision->decision == Decision::kContinue) return Outcome::kGoOn;
  if (decision->decision == Decision::kPause && decision->suspend &&
      decision->iteration == run.iteration) {
    return Outcome::kSuspend;
  }
  return Outcome::kStop;
}

void SimPeer::act(Outcome outcome) {
  if (outcome == Outcome::kStop) end_run();
  if (outcome == Outcome::kSuspend) suspend();
}

// Paused in place: says so, then waits for CONTINUE or START. What arrived
// while it computed is read now, as a suspended rank reads it.
void SimPeer::suspend() {
  set_busy(false);  // first: the launcher hears it before the controller hears DONE
  send(proto::Done{run_->iteration, true});
  state_ = State::kSuspended;
  run_->suspended_at = world_.events.now();
  while (state_ == State::kSuspended && !inbox_.empty()) {
    proto::Message message = std::move(inbox_.front());
    inbox_.pop_front();
    handle(message);
  }
}

// The train function returned or was stopped: DONE, then the next trial
// (a reused rank: the one handed ahead, or the next START within 60 s), or
// the end.
void SimPeer::end_run() {
  // Idle from here unless another trial is handed ahead: the launcher hears
  // it before the controller hears DONE.
  if (setup_.reuse && !next_) set_busy(false);
  send(proto::Done{run_->iteration});
  if (!setup_.reuse) return exit(exited_with(0));
  if (next_) return begin(std::move(*std::exchange(next_, std::nullopt)));
  state_ = State::kIdle;
  timer_ = world_.events.after(kStartTimeoutS, [this] { exit(exited_with(0)); });
  while (state_ == State::kIdle && !inbox_.empty()) {
    proto::Message message = std::move(inbox_.front());
    inbox_.pop_front();
    handle(message);
  }
}

// As a raising train function: ERROR, exit code 1.
void SimPeer::fail(const std::string& what) {
  if (state_ == State::kExited) return;
  const std::string where = fmt::format("rank {} of trial {}", setup_.env.rank,
                                        run_ ? run_->start.trial_id : setup_.env.trial_id);
  log(fmt::format("tunerun worker ({}): {}", where, what),
      run_ && !run_->start.log_path.empty() ? std::filesystem::path(run_->start.log_path)
                                            : setup_.log_file);
  send(proto::ErrorMsg{what, where});
  exit(exited_with(1));
}

void SimPeer::exit(const ExitStatus& status, const std::string& node_lost) {
  state_ = State::kExited;
  world_.events.cancel(std::exchange(timer_, 0));
  world_.events.cancel(std::exchange(beat_timer_, 0));
  world_.events.cancel(std::exchange(death_timer_, 0));
  // A killed rank says nothing more; in virtual time what it said before
  // is listed, so it still goes.
  if (status.signaled && !world_.virtual_time()) socket_->set(zmq::sockopt::linger, 0);
  socket_.reset();
  heartbeat_.reset();
  world_.on_exit(*this, status, node_lost);
}

// ---- busy, durations ----------------------------------------------------------

void SimPeer::set_busy(bool busy) {
  if (std::exchange(busy_, busy) != busy) world_.on_busy(*this, busy);
}

// The table's epoch_s, else the config's sleep_s, else the simulation's
// iteration_s; times the jitter; a late report's delay on top.
double SimPeer::draw_duration() {
  const SimulationSpec& sim = world_.simulation;
  double seconds = run_->curve.duration_s(run_->t).value_or(sim.iteration_s);
  if (sim.iteration_jitter > 0) {
    seconds *= std::uniform_real_distribution<double>(1 - sim.iteration_jitter,
                                                      1 + sim.iteration_jitter)(rng_);
  }
  if (sim.late_report_rate > 0 && std::bernoulli_distribution(sim.late_report_rate)(rng_)) {
    seconds += sim.late_report_s;
  }
  return seconds;
}

// Loaded once for every peer of the process; a table that cannot be read
// fails each trial that needs it, with the reason.
const CurveTable* SimPeer::curve_table() {
  const SimulationSpec& sim = world_.simulation;
  if (sim.curve != "table") return nullptr;
  if (!world_.curve_table) {
    world_.curve_table = std::make_shared<const CurveTable>(CurveTable::load(sim.curve_table));
  }
  return world_.curve_table.get();
}

}  // namespace tune::sim
