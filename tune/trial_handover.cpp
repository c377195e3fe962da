// TrialRuns, part three: trials handed ahead. With reused one-rank groups
// and a scheduler whose pick cannot change (TrialScheduler::chooses_ahead),
// the trial to run next is handed to a running trial's rank, which holds its
// START and starts it the moment its own trial returns; the controller
// makes it RUNNING there when it hears that DONE (conclude), or gives it
// back to the waiting trials when that trial ends otherwise.
#include <fmt/format.h>

#include <utility>

#include "storage/checkpoint_layout.h"
#include "train/worker_env.h"
#include "tune/trial_runs.h"

namespace tune {

// Hands the trial to run next to each running one-rank group without one:
// its rank gets that trial's START now, keeps it while its own trial runs,
// and starts it the moment that one returns, so no round trip to the
// controller lies between two trials. The trial stays PENDING, held for
// that group, until the controller hears the DONE (conclude, then
// run_handed_over). Only where the scheduler's pick cannot change until
// then (chooses_ahead) and nothing winds the experiment down.
void TrialRuns::hand_ahead() {
  if (!hands_ahead_ || winding_down()) return;
  std::vector<std::pair<Trial*, Group*>> free;
  trials_.for_each(TrialStatus::kRunning, [&](Trial& running) {
    Group* group = groups_.find(running.id);
    if (running.phase == TrialPhase::kRunning && group != nullptr && group->next_trial.empty() &&
        !group->terminating && group->ranks.size() == 1 && !group->ranks[0].routing_id.empty() &&
        !group->ranks[0].done) {
      free.emplace_back(&running, group);
    }
  });
  for (auto& [running, group] : free) {
    std::vector<Trial*> waiting = this->waiting();
    if (waiting.empty()) return;
    std::vector<schedulers::TrialView> views;
    views.reserve(waiting.size());
    for (Trial* t : waiting) views.push_back(t->view());
    const int pick = plugins_.scheduler->choose_trial_to_run(views);
    if (pick < 0 || pick >= static_cast<int>(waiting.size()) ||
        waiting[pick]->phase != TrialPhase::kPending) {
      return;
    }
    Trial& next = *waiting[pick];
    try {
      std::filesystem::create_directories(next.dir);
      if (next.started_at) storage::clear_unpublished(next.dir);
      group->next_master_port = train::free_loopback_port();
    } catch (const std::exception&) {
      return;  // launch() meets the same error and fails the trial with it
    }
    group->next_trial = next.id;
    next.handed_ahead = true;
    // Its first leases, as launch() would grant them (it starts from the
    // same checkpoint): run_handed_over keeps them.
    grant_first_leases(next, next.checkpoints.latest);
    channel_.send_now(group->ranks[0].routing_id, start_message(next, 0, group->next_master_port));
    trials_.set_reason(next, fmt::format("waiting: handed to the ranks of {}, which start it "
                                         "when that trial ends",
                                         running->id));
  }
}

// Trial `trial`, handed ahead to the ranks of `from`, which just ended,
// runs there now: it becomes RUNNING as a launched one does, without a
// START. An interrupt or a stop decided meanwhile ends it as it would end a
// running trial.
void TrialRuns::run_handed_over(Trial& trial, const std::string& from) {
  trial.handed_ahead = false;
  restart_from_checkpoint(trial);
  reset_run(trial);
  trials_.transition(trial, TrialPhase::kRunning,
                     fmt::format("started (attempt {}) on the ranks of {}, which had its START",
                                 trial.attempt, from),
                     unix_now());
  trial.suspended = false;
  Group& group = *groups_.find(trial.id);
  for (size_t r = 0; r < group.ranks.size(); ++r) {
    channel_.bind_peer(group.ranks[r].routing_id, {trial.id, static_cast<int>(r)});
  }
  record_placements(trial, group);
  announce_run(trial, GroupSource::kHandedOver);
  if (interrupted_) return kill_for_interrupt(trial);
  const std::string stop = stop_all_ ? stop_all_reason_ : trial.stop_when_started;
  trial.stop_when_started.clear();
  if (stop.empty()) return;
  // Its rank applies this at its first report, before sending it.
  for (const auto& rank : group.ranks) {
    channel_.queue(rank.routing_id, protocol::DecisionMsg{trial.iteration, Decision::kStop, false,
                                                          trial.iteration, trial.id});
  }
  apply(trial, Action{Action::Kind::kStop, stop});
}

// The trial handed ahead to `group`, whose trial ends otherwise (failed,
// interrupted): it waits again for any group. The group is not kept: its
// rank would start that trial.
void TrialRuns::take_back_handed(Group& group) {
  Trial* next = trials_.find(std::exchange(group.next_trial, ""));
  if (next == nullptr || !next->handed_ahead) return;
  next->handed_ahead = false;
  trials_.set_reason(*next, "waiting");
}

}  // namespace tune
