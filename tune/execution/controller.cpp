#include "tune/execution/controller.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <limits>

#include "storage/checkpoint_layout.h"
#include "train/worker_env.h"
#include "tune/channel/rank_keys.h"
#include "tune/channel/router.h"
#include "tune/execution/refusal_log.h"
#include "tune/execution/trial_runs.h"
#include "tune/launch/make_launcher.h"
#include "tune/spec/validation.h"
#include "tune/system/executable.h"
#include "tune/system/experiment_lock.h"
#include "tune/system/file_limit.h"
#include "tune/system/signal_pipe.h"

namespace tune {
namespace {

// Messages handled per turn before the loop commits and answers: enough for
// a commit to carry many results, few enough that the first of them is
// answered within milliseconds (a REPORT costs the loop tens of µs, and
// keeping each trial's last result in the store adds some to each). At
// 1,000 trials x 4 simulated ranks, idle: p50 / p99 2.3-3.4 / 28-37 ms at
// 128 against 5.8-8.9 / 51-78 ms at 512 (benchmarks/scale --only sim).
constexpr int kMaxMessagesPerTurn = 128;
constexpr std::chrono::milliseconds kNoWait{0};
constexpr double kNever = std::numeric_limits<double>::infinity();
double all_memory_available() { return 1.0; }

}  // namespace

class TrialController::Impl {
 public:
  Impl(ExperimentSpec spec, ControllerOptions options)
      : spec_(std::move(spec)),
        options_(std::move(options)),
        log_(options_.verbosity, options_.progress) {
    finish_spec(spec_);
    check_storage_path(spec_);
    if (options_.worker_argv.empty()) options_.worker_argv = {self_executable()};
    // The launcher and the address ranks reach: the spec's cluster settings
    // (tune/launch/make_launcher.h), unless the caller brings a launcher.
    if (options_.launcher) {
      control_address_ = control_address_for(spec_);
    } else {
      LauncherChoice choice = make_launcher(spec_, {.worker_argv0 = options_.worker_argv.front(),
                                                    .zygote_argv = options_.zygote_argv,
                                                    .worker_argv = options_.worker_argv,
                                                    .program_dirs = options_.program_dirs});
      options_.launcher = std::move(choice.launcher);
      control_address_ = std::move(choice.control_address);
    }
    // In virtual time every clock reads the simulation's from here on
    // (tune/system/clock.h): a time budget starts at its start.
    lockstep_ = options_.launcher->lockstep();
    if (lockstep_) virtual_time_.emplace();
    // Workers may start elsewhere (working_dir): every path they get is absolute.
    spec_.storage_path = std::filesystem::absolute(spec_.storage_path);
    const double total_cpus =
        spec_.total_cpus > 0 ? spec_.total_cpus : options_.launcher->total_cpus().value_or(0);
    const int total_gpus =
        spec_.total_gpus >= 0 ? spec_.total_gpus : options_.launcher->total_gpus().value_or(-1);
    pool_.emplace(ResourceLimits{total_cpus, total_gpus, spec_.max_concurrent_trials},
                  spec_.trainable);
    // A group the launcher can never place is refused here, before anything is written.
    options_.launcher->can_place(spec_.trainable.smallest());
    plugins_ = Plugins::from_spec(spec_);
    plugins_.warm_start(spec_);
    const bool exists = std::filesystem::exists(spec_.experiment_dir() / "experiment.db");
    if (options_.resume && !exists) {
      throw ConfigError::at_key(
          "name", fmt::format("no experiment to resume in {}", spec_.experiment_dir().string()));
    }
    if (!options_.resume && exists) {
      throw ConfigError::at_key(
          "name", fmt::format("experiment '{}' already exists in {}; choose another name "
                              "(--name) or remove it",
                              spec_.name, spec_.experiment_dir().string()));
    }
  }

  ExperimentSummary run() {
    log_.start();
    for (const std::string& note : plugins_.notes) log_.log(1, "{}", note);
    open();
    try {
      while (true) {
        runs_->check_stop_all();
        if (!runs_->winding_down()) {
          runs_->create_trials();
          runs_->start_trials();
        }
        runs_->save_state(false);
        runs_->retire_finished();
        commit_and_answer();
        if (runs_->finished()) break;
        if (log_.frame_due()) log_.update(runs_->snapshot(log_.elapsed_s()));
        poll_once();
        // The decisions on what came in go out now, before the turn's other
        // work (starts cost far more than a commit: a group's keys, its launch).
        commit_and_answer();
        log_refusals();
        options_.launcher->poll();
        for (const auto& notice : options_.launcher->take_notices()) log_.log(0, "{}", notice);
        check_launcher_stop();
        record_nodes(false);
        handle_timers(groups_->now());
      }
      return finish();
    } catch (...) {
      mark_failed();
      throw;
    }
  }

 private:
  void open() {
    const auto dir = spec_.experiment_dir();
    std::filesystem::create_directories(dir);
    // Configs, logs and checkpoints are the owner's alone unless the spec
    // shares them with the folder's group.
    using std::filesystem::perms;
    std::filesystem::permissions(dir, spec_.share_with_group
                                          ? perms::owner_all | perms::group_read | perms::group_exec
                                          : perms::owner_all);
    lock_.emplace(dir);
    options_.launcher->check_storage(dir);
    store_.emplace(storage::ExperimentStore::open(dir));
    if (lockstep_ && options_.resume) resume_virtual_time();
    if (!options_.resume) {
      const Json stored_spec = {{"sweep", spec_.source},
                                {"sweep_text", spec_.sweep_text},
                                {"sweep_file", spec_.sweep_file}};
      std::vector<Objective> objectives = spec_.objectives();
      if (objectives.size() < 2) objectives.clear();
      store_->put_experiment({spec_.name, spec_.metric, spec_.mode, stored_spec, unix_now(),
                              ExperimentStatus::kRunning, std::move(objectives)});
    }
    if (options_.handle_signals) signals_.emplace();
    raise_file_limit_for_ranks();
    const ChannelKeys keys = make_channel_keys(dir);
    keys_dir_ = keys.dir;
    channel_.emplace(zmq_, fmt::format("tcp://{}:*", control_address_), keys);
    if (lockstep_) channel_->record_sends();
    keyed_launcher_.emplace(*options_.launcher, *channel_, keys.dir);
    // A command trainable starts its command per trial anyway, and GPUs are
    // bound to a rank's environment at spawn: neither gains from reuse.
    // An elastic group's size changes between runs: it is started anew each time.
    const bool reusable = spec_.trainable.command.empty() && spec_.trainable.gpus_per_worker == 0 &&
                          !spec_.trainable.elastic() && options_.launcher->keeps_idle_groups();
    const bool reuse = reusable && spec_.reuse_workers;
    groups_.emplace(
        *keyed_launcher_,
        WorkerGroupOptions{
            .reuse = reuse,
            .keep_paused = reusable,
            // Simulated ranks hold no memory of this machine's: in
            // virtual time its memory decides nothing.
            .available_memory = lockstep_ ? all_memory_available : available_memory_share,
            // Virtual ranks do not beat: their exits say it all.
            .heartbeat_timeout_s = lockstep_ ? kNever : spec_.heartbeat_timeout_s,
            .prestart = reusable && !reuse && spec_.prestart_workers,
            // In virtual time a connection costs no simulated time.
            .max_connecting_ranks = lockstep_ ? 0 : WorkerGroupOptions{}.max_connecting_ranks});
    WorkerLaunchContext launch{
        options_.worker_argv,
        inherited_environment(pool_->has_gpus(), spec_.trainable.threads_per_worker > 0),
        channel_->endpoint(),
        keys.controller.public_key,
        pool_->has_gpus(),
        reusable};
    runs_.emplace(
        ControllerParts{spec_, options_, *store_, *pool_, plugins_, *groups_, *channel_, log_},
        std::move(launch));
    if (options_.resume) {
      // The nodes' failures of earlier runs count in this one.
      if (auto nodes = store_->state("nodes")) options_.launcher->restore_nodes(*nodes);
      runs_->load();
      store_->set_experiment_status(ExperimentStatus::kRunning);
    }
    store_cluster_settings();
    store_->flush();
    log_.log(1, "experiment {} in {} (controller at {})", spec_.name, dir.string(),
             channel_->endpoint());
    log_.log(2, "ranks run {}", fmt::join(options_.worker_argv, " "));
    if (options_.on_listen) options_.on_listen(channel_->endpoint());
  }

  // A resumed simulation goes on from the last time its experiment stored:
  // its timestamps never go back.
  void resume_virtual_time() {
    const double latest = std::max(kVirtualUnixStart, store_->latest_time().value_or(0));
    VirtualTime::set(kVirtualStart +
                     std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(latest - kVirtualUnixStart)));
  }

  // Commits the store's batch, sends the replies queued for it, then lets
  // the store copy its log into the database file when due: no reply waits
  // for that copy's disk writes.
  void commit_and_answer() {
    store_->commit();
    for (const auto& peer : channel_->flush()) {
      log_.log(1, "warning: could not answer peer {}", ControlChannel::peer_name(peer));
    }
    store_->checkpoint_if_due();
  }

  // Each rank costs the controller descriptors (tune/system/file_limit.h): the
  // soft limit goes up to the hard one before the channel binds, and a hard
  // limit too low for the trials that may run at once is said before any starts.
  void raise_file_limit_for_ranks() {
    const FileLimit limit = raise_file_limit();
    const double cpus_per_trial = spec_.trainable.smallest().cpus_per_trial();
    int64_t trials =
        cpus_per_trial > 0 ? static_cast<int64_t>(pool_->total_cpus() / cpus_per_trial + 1e-9) : 0;
    if (spec_.max_concurrent_trials > 0) {
      trials = trials > 0 ? std::min<int64_t>(trials, spec_.max_concurrent_trials)
                          : spec_.max_concurrent_trials;
    }
    if (auto warning = file_limit_warning(limit, trials, spec_.trainable.num_workers)) {
      log_.log(0, "warning: {}", *warning);
    }
  }

  // The controller's secret key and the ranks' go with the run.
  void remove_keys() noexcept {
    std::error_code ignored;
    if (!keys_dir_.empty()) std::filesystem::remove_all(keys_dir_, ignored);
  }

  ExperimentSummary finish() {
    groups_->discard_idle();
    remove_keys();
    log_refusals();
    record_nodes(true);
    runs_->save_state(true);
    const bool interrupted = runs_->interrupted();
    store_->set_experiment_status(interrupted ? ExperimentStatus::kInterrupted
                                              : ExperimentStatus::kFinished);
    store_->flush();
    log_.finish(runs_->snapshot(log_.elapsed_s()));
    if (interrupted) {
      log_.log(0, "experiment {} stopped ({}); continue it with: tunerun resume {}", spec_.name,
               runs_->interrupt_reason(), spec_.experiment_dir().string());
    }
    ExperimentSummary s = runs_->summarize();
    s.rejected_messages = rejected_;
    s.refused_connections = refused_;
    s.wall_s = log_.elapsed_s();
    s.decision_latency = decision_latency();
    log_.log(2,
             "decisions sent: {}, from the report to the decision p50 {:.3f} ms, p99 {:.3f} ms, "
             "max {:.3f} ms",
             s.decision_latency.count, s.decision_latency.p50_ms, s.decision_latency.p99_ms,
             s.decision_latency.max_ms);
    return s;
  }

  ExperimentSummary::Latency decision_latency() const {
    const LatencyHistogram& h = channel_->decision_latency();
    auto ms = [](std::chrono::nanoseconds d) { return d.count() / 1e6; };
    return {h.count(), ms(h.percentile(0.5)), ms(h.percentile(0.99)), ms(h.max())};
  }

  // The experiment ends abnormally: say so in its row (documented FAILED)
  // when the store still takes writes. It stays resumable.
  void mark_failed() noexcept {
    remove_keys();
    try {
      if (store_) {
        store_->set_experiment_status(ExperimentStatus::kFailed);
        store_->flush();
      }
    } catch (...) {  // the store is what failed: the status stays RUNNING
    }
  }

  // ---- polling ---------------------------------------------------------------

  void poll_once() {
    std::vector<zmq::pollitem_t> items{{channel_->handle(), 0, ZMQ_POLLIN, 0}};
    if (signals_) items.push_back({nullptr, signals_->fd(), ZMQ_POLLIN, 0});
    // In virtual time the channel is read in the simulation's order only (step()).
    if (lockstep_) items[0].events = 0;
    // News for many groups at once (a simulated rank's exit) wakes the loop
    // through the launcher's fds; its poll() this turn hands it to the groups.
    for (int fd : options_.launcher->wake_fds()) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
    // Every running group's exits, through one descriptor (tune/launch/exit_watch.h).
    const size_t exits = items.size();
    items.push_back({nullptr, groups_->exit_fd(), ZMQ_POLLIN, 0});
    try {
      if (zmq::poll(items.data(), items.size(), lockstep_ ? kNoWait : next_timeout()) == 0 &&
          lockstep_ && !step()) {
        // Neither the simulation nor the controller has anything to come:
        // as in real time, wait (for an interrupt).
        zmq::poll(items.data(), items.size(), next_timeout());
      }
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      return;  // a signal: its byte waits in the signal pipe for the next turn
    }
    if (items[0].revents & ZMQ_POLLIN) {
      channel_->drain(kMaxMessagesPerTurn, on_message_, on_reject_);
    }
    // A signal before exits of the same turn: a SIGTERM from Slurm reaches
    // the ranks too, whose deaths are then the interrupt's.
    if (signals_ && (items[1].revents & ZMQ_POLLIN)) {
      for (int n = signals_->take(); n > 0; --n) on_signal();
    }
    if (items[exits].revents & ZMQ_POLLIN) {
      for (const std::string& trial_id : groups_->exited()) {
        for (const auto& event : groups_->reap(trial_id)) runs_->on_group_event(event);
      }
    }
  }

  // Virtual time: nothing is ready now, so the simulation goes on to its
  // next event or to the controller's next deadline (tune/launch/lockstep.h), and
  // what its ranks sent is handled in its order. False when nothing
  // happened and nothing is due: the simulation has nothing to come.
  bool step() {
    const auto deadline = runs_->next_restart(groups_->next_deadline(Clock::time_point::max()));
    if (deadline <= groups_->now()) return true;  // handle_timers' turn
    return lockstep_->advance(
        deadline == Clock::time_point::max() ? std::nullopt : std::optional(deadline),
        channel_->take_sent(), [this](const std::string& routing_id) {
          channel_->take_from(routing_id, on_message_, on_reject_);
        });
  }

  std::chrono::milliseconds next_timeout() {
    const auto now = Clock::now();
    auto due = now + std::chrono::milliseconds(static_cast<int>(spec_.heartbeat_period_s * 1000));
    due = log_.next_due(runs_->next_restart(groups_->next_deadline(due)));
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - now);
    return std::max(wait, std::chrono::milliseconds(0));
  }

  void handle_timers(Clock::time_point now) {
    runs_->check_interrupt_deadline(now);
    for (const auto& event : groups_->check_deadlines(now)) runs_->on_group_event(event);
  }

  // A message the channel could not take. From a rank of a running trial it
  // means that rank is broken: its trial fails (a dropped REPORT would
  // leave the group waiting for its decision forever).
  void reject(const std::string& routing_id, const Peer* peer, const std::string& reason) {
    ++rejected_;
    log_.log(0, "warning: rejected a control message from peer {:?}: {}",
             ControlChannel::peer_name(routing_id), reason);
    if (peer != nullptr) runs_->fail_peer(*peer, reason);
  }

  // Peers refused at the door, each with its address, per address at a
  // bounded rate (tune/execution/refusal_log.h). A finished rank's late connection is
  // no outsider's: it is logged, not warned about.
  void log_refusals() {
    for (auto& refusal : channel_->take_refusals()) {
      ++refused_;
      if (auto line = refusal_log_.line(refusal, Clock::now())) {
        log_.log(refusal.ended_group ? 1 : 0, "{}", *line);
      }
    }
  }

  // The launcher's nodes (CPUs in use, health) for `tunerun status`, when
  // they changed; at most five times a second unless `now` (describing a
  // cluster's nodes costs a turn more than the rest of it).
  void record_nodes(bool now) {
    const auto at = groups_->now();
    if (!now && at < next_nodes_record_) return;
    next_nodes_record_ = at + std::chrono::milliseconds(200);
    Json nodes = options_.launcher->describe_nodes();
    if (nodes.is_null() || nodes == recorded_nodes_) return;
    store_->put_state("nodes", nodes);
    recorded_nodes_ = std::move(nodes);
  }

  // Where the ranks run cannot go on (the allocation ends): paused as on SIGTERM.
  void check_launcher_stop() {
    if (runs_->interrupted()) return;
    const std::string why = options_.launcher->stop_reason();
    if (why.empty()) return;
    const auto waiting = runs_->waiting_trials();
    log_.log(0, "stopping: {}", why);
    log_.log(
        0, "pausing running trials at their next checkpoint (at most {} s){}",
        options_.interrupt_grace_s,
        waiting.empty() ? std::string() : fmt::format("; waiting: {}", fmt::join(waiting, ", ")));
    runs_->interrupt(why);
  }

  // The cluster settings this run took effect with, so that a resume needs
  // no --control-address again: the interface too, which a resume on
  // another host of the cluster finds there under its name.
  void store_cluster_settings() {
    std::string interface = spec_.cluster.control_interface;
    if (interface.empty()) interface = interface_of(control_address_);
    store_->put_state("cluster", {{"launcher", spec_.cluster.launcher},
                                  {"control_address", control_address_},
                                  {"control_interface", interface}});
  }

  void on_signal() {
    if (!runs_->interrupted()) {
      log_.log(0,
               "interrupted: pausing running trials at their next checkpoint (at most {} s); "
               "interrupt again to stop at once",
               options_.interrupt_grace_s);
      runs_->interrupt("interrupted");
    } else {
      log_.log(0, "interrupted again: stopping every trial now");
      runs_->kill_all_running();
    }
  }

  ExperimentSpec spec_;
  ControllerOptions options_;
  RunLog log_;
  std::optional<ResourcePool> pool_;
  Plugins plugins_;
  std::optional<ExperimentLock> lock_;
  std::optional<storage::ExperimentStore> store_;
  std::optional<SignalPipe> signals_;
  zmq::context_t zmq_{1};
  std::optional<ControlChannel> channel_;
  std::optional<KeyedLauncher> keyed_launcher_;  // each rank's own keys, on channel_
  std::string control_address_;                  // the IPv4 address channel_ binds
  std::filesystem::path keys_dir_;               // the run's keys (tune/channel/router.h)
  std::optional<WorkerGroups> groups_;  // after channel_: destroyed first, killing the groups
  std::optional<TrialRuns> runs_;
  Lockstep* lockstep_ = nullptr;             // the launcher's, in virtual time
  std::optional<VirtualTime> virtual_time_;  // while lockstep_ drives the clocks
  const ControlChannel::Handler on_message_ = [this](const std::string& id, const Peer* peer,
                                                     protocol::Message& m) {
    try {
      runs_->on_message(id, peer, m);
    } catch (const ProtocolError& e) {
      reject(id, peer, e.what());
    }
  };
  const ControlChannel::RejectHandler on_reject_ = [this](const std::string& id, const Peer* peer,
                                                          const std::string& why) {
    reject(id, peer, why);
  };
  int64_t rejected_ = 0;
  int64_t refused_ = 0;
  RefusalLog refusal_log_;
  Json recorded_nodes_;  // what record_nodes() last stored
  Clock::time_point next_nodes_record_{};
};

TrialController::TrialController(ExperimentSpec spec, ControllerOptions options)
    : impl_(std::make_unique<Impl>(std::move(spec), std::move(options))) {}

TrialController::~TrialController() = default;

ExperimentSummary TrialController::run() { return impl_->run(); }

}  // namespace tune
