#include "tune/launch/worker_groups.h"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <limits>
#include <string>
#include <utility>

#include "tune/system/file_limit.h"

namespace tune {

bool Group::all_done() const {
  for (const auto& r : ranks) {
    if (!r.done) return false;
  }
  return !ranks.empty();
}

void Group::begin_run(int run_attempt, int port, Clock::time_point now) {
  attempt = run_attempt;
  master_port = port;
  settle_began.reset();
  for (auto& r : ranks) {
    r.done = r.suspended = false;
    r.last_seen = now;
  }
}

bool Group::all_connected() const {
  return std::all_of(ranks.begin(), ranks.end(),
                     [](const Rank& r) { return !r.routing_id.empty(); });
}

bool Group::all_suspended() const {
  return !ranks.empty() &&
         std::all_of(ranks.begin(), ranks.end(), [](const Rank& r) { return r.suspended; });
}

namespace {

// Each kept rank costs the controller a pidfd and a connection.
size_t within_file_limit(size_t ranks) {
  const FileLimit limit = current_file_limit();
  // 0: unreadable; INT64_MAX: unlimited.
  if (limit.soft == 0 || limit.soft == std::numeric_limits<int64_t>::max()) return ranks;
  return std::min(ranks, static_cast<size_t>(limit.soft / 8));
}

}  // namespace

WorkerGroups::WorkerGroups(Launcher& launcher, WorkerGroupOptions options)
    : launcher_(launcher),
      options_(std::move(options)),
      max_suspended_ranks_(within_file_limit(options_.max_suspended_ranks)) {}

WorkerGroups::~WorkerGroups() {
  discard_idle();
  for (auto& [id, group] : groups_) group.processes->kill_and_wait();
}

GroupSource WorkerGroups::start(const std::string& trial_id, int attempt, int master_port,
                                std::vector<std::vector<std::string>> gpus,
                                const GroupLaunch& launch) {
  Group group;
  GroupSource source = GroupSource::kKept;
  if (auto kept = adopt_idle(group, trial_id)) {
    source = *kept;
  } else {
    source = GroupSource::kPrestarted;
    if (!adopt_spare(group)) {
      source = GroupSource::kLaunched;
      group.processes = launcher_.launch(launch);
      group.ranks.resize(launch.ranks.size());
      group.held_check = now() + options_.held_check;
      forget_connecting(trial_id);
      connecting_[trial_id] = group.ranks.size();
      connecting_ranks_ += group.ranks.size();
    }
  }
  group.gpus = std::move(gpus);
  group.begin_run(attempt, master_port, now());
  Group& started = groups_[trial_id] = std::move(group);
  started.check_at.reset();
  schedule(trial_id, started);
  exits_.watch(trial_id, started.processes->exit_fds());
  spares_after_ = now() + options_.spare_delay;
  return source;
}

void WorkerGroups::add_spare(int serial, const GroupLaunch& launch) {
  Spare spare{Group{}, serial};
  spare.group.processes = launcher_.launch(launch);
  spare.group.ranks.resize(launch.ranks.size());
  spares_.push_back(std::move(spare));
}

bool WorkerGroups::spare_hello(int serial, int rank, int64_t pid, const Rank& hello) {
  for (auto& spare : spares_) {
    if (spare.serial != serial || rank < 0 || rank >= static_cast<int>(spare.group.ranks.size())) {
      continue;
    }
    Rank& slot = spare.group.ranks[rank];
    const int64_t expected = spare.group.processes->pid(rank);
    if (!slot.routing_id.empty() || (expected != 0 && expected != pid)) return false;
    slot = hello;
    return true;
  }
  return false;
}

// Takes the oldest spare whose ranks all said HELLO; spares with a rank
// gone are killed on the way (and new ones wanted). Age does not matter: a
// spare rank waits for its START as long as the controller lives.
bool WorkerGroups::adopt_spare(Group& group) {
  for (auto it = spares_.begin(); it != spares_.end();) {
    if (!it->group.processes->reap().empty()) {
      let_go(std::move(it->group.processes));
      it = spares_.erase(it);
      continue;
    }
    if (it->group.all_connected()) {
      group = std::move(it->group);
      spares_.erase(it);
      return true;
    }
    ++it;
  }
  return false;
}

// Takes the idle group kept for `trial_id`, else with reuse the newest one
// kept for no trial (failing that, the newest of all), if it is still whole;
// groups idle too long or with a rank gone are killed on the way. Returns
// kSuspended for `trial_id`'s own suspended ranks, kKept for others,
// nullopt when it took none.
std::optional<GroupSource> WorkerGroups::adopt_idle(Group& group, const std::string& trial_id) {
  while (true) {
    auto it = std::find_if(idle_.rbegin(), idle_.rend(),
                           [&](const Idle& idle) { return idle.kept_for == trial_id; });
    if (it == idle_.rend() && options_.reuse) {
      it = std::find_if(idle_.rbegin(), idle_.rend(),
                        [](const Idle& idle) { return idle.kept_for.empty(); });
      if (it == idle_.rend()) it = idle_.rbegin();
    }
    if (it == idle_.rend()) return std::nullopt;
    Idle idle = std::move(*it);
    idle_.erase(std::next(it).base());
    const bool suspended = idle.group.all_suspended();
    // A suspended rank waits without a deadline; an idle one gives up after a minute.
    const bool fresh = suspended || now() - idle.since < options_.idle_limit;
    if (fresh && idle.group.processes->reap().empty()) {
      group = std::move(idle.group);
      return suspended && idle.kept_for == trial_id ? GroupSource::kSuspended : GroupSource::kKept;
    }
    let_go(std::move(idle.group.processes));
  }
}

bool WorkerGroups::holds_suspended(const std::string& trial_id) const {
  return std::any_of(idle_.begin(), idle_.end(), [&](const Idle& idle) {
    return idle.kept_for == trial_id && idle.group.all_suspended();
  });
}

void WorkerGroups::discard_kept(const std::string& trial_id) {
  std::erase_if(idle_, [&](Idle& idle) {
    if (idle.kept_for != trial_id) return false;
    let_go(std::move(idle.group.processes));
    return true;
  });
}

Group* WorkerGroups::find(const std::string& trial_id) {
  auto it = groups_.find(trial_id);
  return it == groups_.end() ? nullptr : &it->second;
}

const Group* WorkerGroups::find(const std::string& trial_id) const {
  auto it = groups_.find(trial_id);
  return it == groups_.end() ? nullptr : &it->second;
}

Rank* WorkerGroups::find_rank(const std::string& trial_id, int attempt, int rank) {
  Group* group = find(trial_id);
  if (group == nullptr || group->attempt != attempt || rank < 0 ||
      rank >= static_cast<int>(group->ranks.size())) {
    return nullptr;
  }
  return &group->ranks[rank];
}

void WorkerGroups::terminate(const std::string& trial_id) {
  Group& group = groups_.at(trial_id);
  group.terminating = true;
  group.processes->signal(SIGTERM);
  group.kill_deadline = now() + options_.kill_grace;
  wakes_.push({*group.kill_deadline, trial_id});
  schedule(trial_id, group);
}

void WorkerGroups::kill(const std::string& trial_id) {
  Group& group = groups_.at(trial_id);
  group.terminating = true;
  group.processes->signal(SIGKILL);
}

void WorkerGroups::settle(const std::string& trial_id) {
  Group& group = groups_.at(trial_id);
  group.kill_deadline.reset();
  if (!group.settle_began) group.settle_began = now();
  if (!group.settle_deadline) {
    group.settle_deadline = now() + options_.settle_time;
    wakes_.push({*group.settle_deadline, trial_id});
  }
  schedule(trial_id, group);
}

void WorkerGroups::forget_connecting(const std::string& trial_id) {
  if (auto it = connecting_.find(trial_id); it != connecting_.end()) {
    connecting_ranks_ -= it->second;
    connecting_.erase(it);
  }
}

Group WorkerGroups::release(const std::string& trial_id, bool keep) {
  forget_connecting(trial_id);
  exits_.forget(trial_id);
  auto node = groups_.extract(trial_id);
  Group group = std::move(node.mapped());
  group.settle_deadline.reset();
  group.kill_deadline.reset();
  if (keep) {
    // Suspended ranks hold this trial's state: no other trial takes them first.
    const bool open_to_all = options_.reuse && !group.all_suspended();
    Idle idle{Group{}, now(), open_to_all ? "" : trial_id};
    idle.group.processes = std::move(group.processes);
    idle.group.ranks = group.ranks;
    idle_.push_back(std::move(idle));
    bound_idle(group.all_suspended());
  } else {
    // GPUs are given back only once their processes are gone: those are
    // killed now (and waited for). Whatever the ranks started (a command
    // trainable's children) goes too.
    const bool holds_gpus = std::any_of(group.gpus.begin(), group.gpus.end(),
                                        [](const auto& devices) { return !devices.empty(); });
    if (holds_gpus) {
      group.processes->signal(SIGKILL);
    } else {
      let_go(std::move(group.processes), options_.kill_delay);
    }
  }
  return group;
}

void WorkerGroups::bound_idle(bool suspended) {
  auto is = [&](const Idle& idle) { return idle.group.all_suspended() == suspended; };
  size_t groups = 0, ranks = 0;
  for (const Idle& idle : idle_) {
    if (!is(idle)) continue;
    ++groups;
    ranks += idle.group.ranks.size();
  }
  const bool over =
      suspended ? ranks > max_suspended_ranks_ ||
                      (groups > 0 && options_.available_memory() < options_.min_available_memory)
                : groups > options_.max_idle;
  if (!over) return;
  auto oldest = std::find_if(idle_.begin(), idle_.end(), is);
  let_go(std::move(oldest->group.processes));
  idle_.erase(oldest);
}

double available_memory_share() {
  std::ifstream in("/proc/meminfo");
  double total = 0, available = 0;
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    if (key == "MemTotal:") total = kb;
    if (key == "MemAvailable:") available = kb;
    std::getline(in, unit);
  }
  return total > 0 && available > 0 ? available / total : 1.0;
}

void WorkerGroups::hand_over(const std::string& from, const std::string& to, int attempt,
                             int master_port) {
  forget_connecting(from);
  exits_.forget(from);
  auto node = groups_.extract(from);
  node.key() = to;
  Group& group = groups_.insert(std::move(node)).position->second;
  group.begin_run(attempt, master_port, now());
  group.settle_deadline.reset();
  group.kill_deadline.reset();
  group.check_at.reset();  // its queued look names `from`
  schedule(to, group);
  exits_.watch(to, group.processes->exit_fds());
}

std::vector<GroupEvent> WorkerGroups::reap(const std::string& trial_id) {
  std::vector<GroupEvent> events;
  Group* group = find(trial_id);
  if (group == nullptr) return events;
  for (const auto& exit : group->processes->reap()) {
    events.push_back({GroupEvent::Kind::kRankExited, trial_id, exit.rank, exit.status});
  }
  // A reaped rank's descriptor may stay readable: only the live ones are watched.
  exits_.watch(trial_id, group->processes->exit_fds());
  return events;
}

// Sent SIGKILL and reaped later (check_deadlines), not waited for: nothing
// in the loop waits for the kernel to tear a group down.
void WorkerGroups::let_go(std::unique_ptr<LaunchedGroup> processes,
                          std::chrono::milliseconds delay) {
  Dying dying{std::move(processes), std::nullopt};
  if (delay.count() > 0) {
    dying.kill_at = now() + delay;
  } else {
    dying.processes->signal(SIGKILL);
  }
  dying_.push_back(std::move(dying));
}

std::vector<GroupEvent> WorkerGroups::check_deadlines(Clock::time_point now) {
  std::erase_if(dying_, [now](Dying& dying) {
    if (dying.kill_at && now >= *dying.kill_at) {
      dying.processes->signal(SIGKILL);
      dying.kill_at.reset();
    }
    dying.processes->reap();
    return dying.processes->all_exited();
  });
  // The groups due, each once and in id order (as a scan of every group
  // would find them); looked at after all are taken, since a look may queue
  // the next at once (a silent rank is reported at every turn).
  std::vector<std::string> due;
  while (!looks_.empty() && looks_.top().at <= now) {
    Look look = looks_.top();
    looks_.pop();
    Group* group = find(look.trial_id);
    if (group == nullptr || group->check_at != look.at) continue;  // gone, or looks again later
    group->check_at.reset();
    due.push_back(std::move(look.trial_id));
  }
  std::sort(due.begin(), due.end());
  std::vector<GroupEvent> events;
  for (const std::string& id : due) {
    Group& group = groups_.at(id);
    check_group(id, group, now, events);
    schedule(id, group);
  }
  return events;
}

void WorkerGroups::check_group(const std::string& id, Group& group, Clock::time_point now,
                               std::vector<GroupEvent>& events) {
  if (group.kill_deadline && now >= *group.kill_deadline) {
    group.processes->signal(SIGKILL);
    group.kill_deadline.reset();
  }
  if (group.settle_deadline && now >= *group.settle_deadline) {
    group.settle_deadline.reset();
    events.push_back({GroupEvent::Kind::kSettled, id});
    return;
  }
  if (group.terminating) return;
  if (group.held_check && now >= *group.held_check) {
    group.held_check.reset();
    if (!group.all_connected()) {
      group.held_check = now + options_.held_check;
      if (std::string why = group.processes->held_reason(); !why.empty()) {
        events.push_back({GroupEvent::Kind::kHeld, id, 0, {}, 0, std::move(why)});
        return;
      }
    }
  }
  const auto timeout = std::chrono::duration<double>(options_.heartbeat_timeout_s);
  for (size_t r = 0; r < group.ranks.size(); ++r) {
    const auto silent = now - group.ranks[r].last_seen;
    if (group.processes->exit_status(static_cast<int>(r)) || silent < timeout) continue;
    events.push_back({GroupEvent::Kind::kHeartbeatMissed,
                      id,
                      static_cast<int>(r),
                      {},
                      std::chrono::duration<double>(silent).count()});
    return;
  }
}

namespace {

// `t` plus `seconds`, or the end of time when that is past it (an endless
// heartbeat timeout: virtual time's).
Clock::time_point plus_seconds(Clock::time_point t, double seconds) {
  const double room = std::chrono::duration<double>(Clock::time_point::max() - t).count();
  if (!(seconds < room)) return Clock::time_point::max();
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

// The first of the group's deadlines that check_group acts on. A rank's
// last_seen only moves later between looks: a look comes early at worst,
// finds nothing and queues the next.
void WorkerGroups::schedule(const std::string& trial_id, Group& group) {
  Clock::time_point at = Clock::time_point::max();
  if (group.kill_deadline) at = std::min(at, *group.kill_deadline);
  if (group.settle_deadline) at = std::min(at, *group.settle_deadline);
  if (!group.terminating) {
    if (group.held_check) at = std::min(at, *group.held_check);
    for (size_t r = 0; r < group.ranks.size(); ++r) {
      if (group.processes->exit_status(static_cast<int>(r))) continue;
      at = std::min(at, plus_seconds(group.ranks[r].last_seen, options_.heartbeat_timeout_s));
    }
  }
  if (at == Clock::time_point::max() || (group.check_at && *group.check_at <= at)) return;
  group.check_at = at;
  looks_.push({at, trial_id});
}

Clock::time_point WorkerGroups::next_deadline(Clock::time_point latest) {
  for (const auto& dying : dying_) {
    if (dying.kill_at) latest = std::min(latest, *dying.kill_at);
  }
  // A wake-up when a spare may start; a spare that could start already
  // starts in the turn's start_trials, if any trial is left to start.
  if (lacks_spare() && spares_after_ > now()) latest = std::min(latest, spares_after_);
  while (!wakes_.empty()) {
    const Look& wake = wakes_.top();
    const Group* group = find(wake.trial_id);
    if (group != nullptr &&
        (group->settle_deadline == wake.at || group->kill_deadline == wake.at)) {
      return std::min(latest, wake.at);
    }
    wakes_.pop();  // that deadline passed or went
  }
  return latest;
}

void WorkerGroups::discard_idle() {
  for (auto& idle : idle_) idle.group.processes->kill_and_wait();
  idle_.clear();
  for (auto& spare : spares_) spare.group.processes->kill_and_wait();
  spares_.clear();
}

}  // namespace tune
