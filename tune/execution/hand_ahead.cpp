// HandAhead (tune/execution/hand_ahead.h): the next trial handed to a running trial's
// ranks, and taken back when they end.
#include "tune/execution/hand_ahead.h"

#include <fmt/format.h>

#include <utility>

#include "storage/checkpoint_layout.h"
#include "train/worker_env.h"

namespace tune {

HandAhead::HandAhead(const TrialParts& parts, RunStart& start)
    : on_(parts.groups.reuses() && parts.spec.trainable.num_workers == 1 &&
          parts.plugins.scheduler->chooses_ahead()),
      parts_(parts),
      start_(start) {}

std::vector<Trial*> HandAhead::waiting() {
  std::vector<Trial*> waiting = parts_.trials.waiting();
  const Clock::time_point now = parts_.groups.now();
  std::erase_if(waiting, [&](const Trial* t) {
    return held_.contains(t->id) || t->restart_after > now;  // backing off after failures
  });
  return waiting;
}

// Each handed trial stays PENDING, held for its group, until the controller
// hears that group's DONE.
void HandAhead::hand_out() {
  if (!on_) return;
  std::vector<std::pair<Trial*, Group*>> free;
  parts_.trials.for_each(TrialStatus::kRunning, [&](Trial& running) {
    Group* group = parts_.groups.find(running.id);
    if (running.phase == TrialPhase::kRunning && group != nullptr && !ranks_hold_next(running.id) &&
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
    const int pick = parts_.plugins.scheduler->choose_trial_to_run(views);
    if (pick < 0 || pick >= static_cast<int>(waiting.size()) ||
        waiting[pick]->phase != TrialPhase::kPending) {
      return;
    }
    Trial& next = *waiting[pick];
    int master_port = 0;
    try {
      std::filesystem::create_directories(next.dir);
      if (next.started_at) storage::clear_unpublished(next.dir);
      master_port = train::free_loopback_port();
    } catch (const std::exception&) {
      return;  // launch() meets the same error and fails the trial with it
    }
    held_[next.id] = {master_port, ""};
    next_of_[running->id] = next.id;
    // Its first leases, as launch() would grant them (it starts from the
    // same checkpoint): begin_handed_over keeps them.
    start_.grant_first_leases(next, next.checkpoints.latest);
    parts_.channel.send_now(group->ranks[0].routing_id, start_.start_message(next, 0, master_port));
    parts_.trials.set_reason(next, fmt::format("waiting: handed to the ranks of {}, which start it "
                                               "when that trial ends",
                                               running->id));
  }
}

bool HandAhead::stop_when_started(const std::string& trial_id, std::string reason) {
  auto it = held_.find(trial_id);
  if (it == held_.end()) return false;
  it->second.stop_reason = std::move(reason);
  return true;
}

HandAhead::Next HandAhead::take(const std::string& running_id, bool ranks_go_on) {
  auto handed = next_of_.extract(running_id);
  if (handed.empty()) return {};
  auto node = held_.extract(handed.mapped());
  Trial* next = parts_.trials.find(handed.mapped());
  if (node.empty() || next == nullptr) return {};
  if (ranks_go_on && next->phase == TrialPhase::kPending) {
    return {next, node.mapped().master_port, std::move(node.mapped().stop_reason)};
  }
  parts_.trials.set_reason(*next, "waiting");
  return {};
}

}  // namespace tune
