// RunStart (tune/execution/run_start.h): a trial's run, from its group and START to RUNNING.
#include "tune/execution/run_start.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "storage/checkpoint_layout.h"
#include "train/worker_env.h"

namespace tune {

RunStart::RunStart(const TrialParts& parts, WorkerLaunchContext launch, const WindDown& wind_down,
                   TrialHooks& hooks)
    : parts_(parts), launch_(std::move(launch)), wind_down_(wind_down), hooks_(hooks) {}

// The run starts at the trial's latest checkpoint (or from scratch).
void RunStart::restart_from_checkpoint(Trial& trial) {
  trial.iteration = trial.checkpoints.latest;
  trial.time_offset_s = trial.checkpoints.latest > 0 ? trial.checkpoints.latest_time_total_s : 0.0;
  trial.collector.reset(trial.world_size, trial.iteration);
}

// A checkpoint deleted while the experiment ran (or stopped) would fail the
// run that loads it, charged to max_failures: the trial goes on from the
// newest one still there instead, and says so.
void RunStart::skip_missing_checkpoints(Trial& trial) {
  const int64_t wanted = trial.checkpoints.latest;
  if (wanted == 0) return;
  const auto gone = parts_.checkpoints.drop_missing(trial.id, trial.dir, trial.checkpoints);
  if (gone.empty() || gone.front() != wanted) return;  // older ones matter to no resume
  const std::string what = fmt::format(
      "checkpoint {} of trial {} is missing ({}); it resumes from {}", wanted, trial.id,
      storage::CheckpointManager::path(trial.dir, wanted).string(),
      trial.checkpoints.latest > 0 ? fmt::format("checkpoint {}", trial.checkpoints.latest)
                                   : std::string("scratch"));
  parts_.log.log(0, "warning: {}", what);
  parts_.trials.note(trial, what, unix_now());
}

bool RunStart::launch(Trial& trial) {
  // A trial paused with its ranks kept alive in report() goes on where it
  // stopped: same iteration, same time so far, nothing reloaded.
  const bool in_place = trial.suspended && parts_.groups.holds_suspended(trial.id);
  if (!in_place) skip_missing_checkpoints(trial);
  const bool resuming = trial.checkpoints.latest > 0;
  const bool unpausing = trial.phase == TrialPhase::kPaused;
  const int64_t progress = trial.iteration;  // where a paused trial stopped
  if (!in_place) trial.world_size = world_size();
  if (in_place) {
    trial.collector.reset(trial.world_size, trial.iteration);
  } else {
    restart_from_checkpoint(trial);
  }
  reset_run(trial);
  auto gpus = parts_.pool.acquire(trial.world_size);
  parts_.trials.transition(
      trial, TrialPhase::kRunning,
      in_place   ? fmt::format("resumed in place at iteration {}", trial.iteration)
      : resuming ? fmt::format("resumed from checkpoint {}", trial.checkpoints.latest)
                 : fmt::format("started (attempt {})", trial.attempt),
      unix_now());
  if (unpausing) hooks_.unpausing(trial);
  GroupSource source = GroupSource::kLaunched;
  try {
    std::filesystem::create_directories(trial.dir);
    // Ranks waiting in place may hold a checkpoint they are about to stage;
    // a trial that never ran has nothing to clear.
    if (!in_place && trial.started_at) storage::clear_unpublished(trial.dir);
    const int master_port = train::free_loopback_port();
    source = parts_.groups.start(trial.id, trial.attempt, master_port, gpus,
                                 worker_launch(launch_, parts_.spec, trial, master_port, gpus));
    // Kept ranks gone after all: no rank of the new group has its START
    // yet, so none writes there.
    if (in_place && source != GroupSource::kSuspended) storage::clear_unpublished(trial.dir);
  } catch (const std::exception& e) {
    // A group that cannot start fails its trial, not the experiment.
    parts_.pool.release(gpus);
    trial.error = fmt::format("could not start its workers: {}", e.what());
    parts_.trials.transition(trial, TrialPhase::kFailing, trial.error, unix_now());
    parts_.log.log(1, "{} failing: {}", trial.id, trial.error);
    return false;
  }
  const bool resumed_in_place = in_place && source == GroupSource::kSuspended;
  if (in_place && !resumed_in_place) restart_from_checkpoint(trial);  // its kept ranks were gone
  if (unpausing && !resumed_in_place && trial.checkpoints.latest == 0 && progress > 0) {
    const std::string what = fmt::format(
        "paused at iteration {} without a checkpoint: restarts from scratch (report a checkpoint "
        "to train::report to resume where it stopped)",
        progress);
    parts_.log.log(0, "warning: {} {}", trial.id, what);
    parts_.trials.note(trial, what, unix_now());
  }
  trial.suspended = false;
  grant_first_leases(trial, trial.iteration);
  if (resumed_in_place) {
    // Each rank waits in report() for the decision on its last iteration.
    Group& group = *parts_.groups.find(trial.id);
    for (size_t r = 0; r < group.ranks.size(); ++r) {
      parts_.channel.bind_peer(group.ranks[r].routing_id, {trial.id, static_cast<int>(r)});
      parts_.channel.send_now(
          group.ranks[r].routing_id,
          protocol::DecisionMsg{trial.iteration, Decision::kContinue, false, trial.continue_through,
                                trial.id, trial.checkpoint_through});
    }
  } else if (source != GroupSource::kLaunched) {
    // Ranks already connected (kept, or a spare) run this one: they hear its
    // START now, before anything else is written.
    Group& group = *parts_.groups.find(trial.id);
    for (size_t r = 0; r < group.ranks.size(); ++r) {
      parts_.channel.bind_peer(group.ranks[r].routing_id, {trial.id, static_cast<int>(r)});
      parts_.channel.send_now(group.ranks[r].routing_id,
                              start_message(trial, static_cast<int>(r), group.master_port));
    }
    record_placements(trial, group);
  }
  hooks_.started(trial, source);
  return true;
}

// An elastic group gets as many ranks as the pool and the launcher have
// room for now (at least its fewest: launch_waiting checked that they fit);
// any other its num_workers.
int RunStart::world_size() const {
  const Resources& per_rank = parts_.spec.trainable;
  if (!per_rank.elastic()) return per_rank.num_workers;
  const int fit = std::min(parts_.pool.ranks_free(), parts_.groups.max_ranks(per_rank));
  return std::max(fit, per_rank.fewest_workers());
}

// It becomes RUNNING as a launched trial does, without a START: its rank
// has had that since it was handed the trial.
void RunStart::begin_handed_over(Trial& trial, const std::string& from) {
  trial.world_size = parts_.spec.trainable.num_workers;  // hand_ahead: one rank, never elastic
  restart_from_checkpoint(trial);
  reset_run(trial);
  parts_.trials.transition(
      trial, TrialPhase::kRunning,
      fmt::format("started (attempt {}) on the ranks of {}, which had its START", trial.attempt,
                  from),
      unix_now());
  trial.suspended = false;
  Group& group = *parts_.groups.find(trial.id);
  for (size_t r = 0; r < group.ranks.size(); ++r) {
    parts_.channel.bind_peer(group.ranks[r].routing_id, {trial.id, static_cast<int>(r)});
  }
  record_placements(trial, group);
  hooks_.started(trial, GroupSource::kHandedOver);
}

// What every run starts without: its last run's pause, exploit, error and end.
void RunStart::reset_run(Trial& trial) {
  trial.pause_at_next_report = trial.error_from_worker = trial.cluster_fault = false;
  trial.resizing = false;
  trial.exploit.reset();
  trial.error.clear();
  trial.end_reason.clear();
}

void RunStart::record_placements(const Trial& trial, const Group& group) {
  for (size_t r = 0; r < group.ranks.size(); ++r) {
    parts_.store.add_placement({trial.id, trial.attempt, static_cast<int64_t>(r),
                                group.ranks[r].host, group.ranks[r].step, unix_now()});
  }
}

// Starts a later trial's processes ahead, while others run. A spare that
// cannot start costs nothing but the log line: the next trial launches its
// own group (and names the error if it fails the same way).
bool RunStart::start_spare() {
  try {
    const int serial = ++spares_started_;
    parts_.groups.add_spare(serial, spare_launch(launch_, parts_.spec, serial));
    return true;
  } catch (const std::exception& e) {
    parts_.log.log(1, "could not prestart workers: {}", e.what());
    return false;
  }
}

void RunStart::on_hello(const std::string& routing_id, const protocol::Hello& hello) {
  if (hello.trial_id == train::kSpareTrialId) {
    // A prestarted rank: it waits, unbound, until a trial takes its group.
    if (!parts_.groups.spare_hello(hello.attempt, hello.rank, hello.pid,
                                   Rank{.routing_id = routing_id,
                                        .host = hello.host,
                                        .step = hello.step,
                                        .last_seen = parts_.groups.now()})) {
      throw ProtocolError(fmt::format("HELLO of spare rank {} (pid {}), which is not expected",
                                      hello.rank, hello.pid));
    }
    return;
  }
  Rank* rank = parts_.groups.find_rank(hello.trial_id, hello.attempt, hello.rank);
  if (rank == nullptr) {
    throw ProtocolError(fmt::format("HELLO for trial {} rank {} attempt {}, which is not running",
                                    hello.trial_id, hello.rank, hello.attempt));
  }
  Group& group = *parts_.groups.find(hello.trial_id);
  const int64_t pid = group.processes->pid(hello.rank);
  if (!rank->routing_id.empty() || (pid != 0 && pid != hello.pid)) {
    throw ProtocolError(fmt::format("HELLO claims trial {} rank {} (pid {}), already taken",
                                    hello.trial_id, hello.rank, hello.pid));
  }
  rank->routing_id = routing_id;
  rank->host = hello.host;
  rank->step = hello.step;
  rank->last_seen = parts_.groups.now();
  if (group.all_connected()) {
    group.processes->started();
    parts_.groups.connected(hello.trial_id);
  }
  parts_.store.add_placement(
      {hello.trial_id, hello.attempt, hello.rank, hello.host, hello.step, unix_now()});
  parts_.channel.bind_peer(routing_id, {hello.trial_id, hello.rank});
  parts_.channel.send_now(routing_id, start_message(*parts_.trials.find(hello.trial_id), hello.rank,
                                                    group.master_port));
}

protocol::Start RunStart::start_message(const Trial& trial, int rank, int master_port) const {
  const bool resuming = trial.checkpoints.latest > 0;
  return protocol::Start{
      parts_.spec.trainable.name,
      parts_.spec.trainable.library,
      trial.config,
      trial.dir.string(),
      parts_.spec.name,
      trial.world_size,
      resuming ? storage::CheckpointManager::path(trial.dir, trial.checkpoints.latest).string()
               : "",
      trial.checkpoints.latest,
      parts_.spec.trainable.command,
      trial.id,
      trial.attempt,
      master_port,
      (trial.dir / fmt::format("rank_{}.log", rank)).string(),
      !parts_.plugins.scheduler->needs_synchronous_reports(),
      trial.continue_through,
      trial.checkpoint_through};
}

void RunStart::grant_first_leases(Trial& trial, int64_t start_iteration) const {
  // Reports the scheduler lets continue whatever they say do not wait.
  const LeaseTerms terms = lease_terms(trial, start_iteration);
  trial.continue_through = continue_lease(terms);
  trial.checkpoint_through = checkpoint_lease(terms);
}

LeaseTerms RunStart::lease_terms(const Trial& trial, int64_t iteration) const {
  const schedulers::TrialScheduler& scheduler = *parts_.plugins.scheduler;
  LeaseTerms terms{.iteration = iteration,
                   .synchronous = scheduler.needs_synchronous_reports(),
                   .scheduler_pauses = scheduler.pauses_trials(),
                   .winding_down = wind_down_.winding_down(),
                   .scheduler_through = scheduler.continues_through(trial.view(), iteration)};
  for (const auto& stopper : parts_.plugins.stoppers) {
    terms.stoppers_through =
        std::min(terms.stoppers_through, stopper->continues_through(trial.id, iteration));
  }
  return terms;
}

}  // namespace tune
