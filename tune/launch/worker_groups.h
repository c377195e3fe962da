// WorkerGroups: the worker groups of running trials, as Ray's trial
// executor: launching them through a Launcher (tune/launch/launcher.h), keeping
// finished ones for the next trial (reuse_workers), signals, reaping, and a
// group's deadlines (heartbeats, the settle time after its ranks exited, the
// SIGKILL after a failed group's SIGTERM). It reports what happened as
// GroupEvents; the controller decides what they mean for the trial.
//
// Every deadline is on the clock WorkerGroupOptions::now gives: the steady
// clock unless a test drives its own. What a loop turn asks of it costs the
// same at 4,000 ranks as at 4: the exits come through one descriptor, and
// only the groups with a deadline due are looked at.
//
// Owned by the controller's event loop; not thread-safe. Destroying it kills
// every group, idle ones too.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "tune/launch/exit_watch.h"
#include "tune/launch/launcher.h"
#include "tune/system/clock.h"

namespace tune {

// MemAvailable / MemTotal from /proc/meminfo; 1 where it cannot be read.
double available_memory_share();

// One rank of a live group, as the control channel knows it.
struct Rank {
  std::string routing_id;  // its ZeroMQ identity, after HELLO
  std::string host;        // where it runs, and its Slurm step (HELLO)
  std::string step;
  bool done = false;       // sent DONE
  bool suspended = false;  // ... from inside report(), paused: resumable in place
  Clock::time_point last_seen;
};

struct Group {
  std::unique_ptr<LaunchedGroup> processes;
  std::vector<Rank> ranks;
  int attempt = 0;
  int master_port = 0;                         // this run's rendezvous port (MASTER_PORT)
  std::vector<std::vector<std::string>> gpus;  // per rank, given back when the group ends
  bool terminating = false;                    // signalled to stop; heartbeats no longer count
  std::optional<Clock::time_point> settle_deadline;  // every rank exited: wait for late words
  std::optional<Clock::time_point> settle_began;     // the first settle of this run
  std::optional<Clock::time_point> kill_deadline;    // SIGKILL then
  // Launched ranks not all connected by then: the launcher is asked
  // whether the cluster holds them (LaunchedGroup::held_reason).
  std::optional<Clock::time_point> held_check;
  // When WorkerGroups looks at this group's deadlines next (its entry in
  // their queue): no earlier than the first of them.
  std::optional<Clock::time_point> check_at;

  // A new run on these ranks: its attempt and rendezvous port; no rank has
  // said DONE yet, each was seen `now`.
  void begin_run(int run_attempt, int port, Clock::time_point now);
  bool all_done() const;
  bool all_suspended() const;
  bool all_connected() const;  // every rank said HELLO
  bool all_exited() const { return processes->all_exited(); }
};

struct GroupEvent {
  enum class Kind {
    kRankExited,       // `rank` exited with `status`
    kSettled,          // the settle time after the last exit passed
    kHeartbeatMissed,  // `rank` sent nothing for `silent_s`
    kHeld,             // the cluster holds the ranks, which never started: `reason`
  };
  Kind kind;
  std::string trial_id;
  int rank = 0;
  ExitStatus status;
  double silent_s = 0;
  std::string reason;
};

struct WorkerGroupOptions {
  bool reuse = false;  // reuse_workers: keep groups whose ranks all said DONE, for any trial
  // Keep a pausing trial's group (every rank said DONE) for that trial's
  // resume: a PBT exploit or HyperBand promotion then costs no process start.
  bool keep_paused = false;
  size_t max_idle = 8;  // idle groups kept at most, suspended ones apart; the oldest go first
  // Suspended groups (a paused trial's own ranks, waiting inside report()
  // with its state in memory) are kept for that trial's resume apart from
  // max_idle, since a population that pauses in turn (PBT on fewer slots
  // than trials) resumes each only after all the others: as long as they
  // hold at most max_suspended_ranks ranks (and an eighth of the open-file
  // limit: each costs the controller a pidfd and a connection), and at
  // least min_available_memory of the machine's memory is available
  // (MemAvailable / MemTotal). The oldest go first; a trial whose ranks
  // went resumes from its checkpoint.
  size_t max_suspended_ranks = 256;
  double min_available_memory = 0.25;
  std::function<double()> available_memory = available_memory_share;
  double heartbeat_timeout_s = 30;  // a rank silent this long is reported
  // Launched ranks not all connected this long are checked, and then as
  // often: does the cluster hold them (kHeld) rather than they hang?
  std::chrono::seconds held_check{5};
  std::chrono::milliseconds settle_time{500};  // for DONE or ERROR still in flight after exits
  std::chrono::seconds kill_grace{3};          // between terminate()'s SIGTERM and SIGKILL
  std::chrono::seconds idle_limit{30};         // idle groups older than this are not reused
  // A released group's ranks, idle since their DONE, get SIGKILL this much
  // later: the kernel's teardown of a process takes a millisecond of CPU
  // that the start of the trial taking its place needs more.
  std::chrono::milliseconds kill_delay{5};
  // Keep groups of fresh processes started ahead (add_spare), connected and
  // waiting for a trial, one per running group up to max_spares: a fresh
  // trial then costs no process start on its critical path, yet runs in
  // processes that ran no trial before.
  bool prestart = false;
  size_t max_spares = 4;
  // ... none sooner than this after a group was started: a process start
  // takes milliseconds of CPU that the starting trial's ranks need then.
  std::chrono::milliseconds spare_delay{5};
  // Ranks launched and not yet all connected (their group's HELLOs) at most
  // this many, across groups; 0: no bound. Each connection's CURVE
  // handshake costs the controller's ZeroMQ I/O thread a fraction of a
  // millisecond, and thousands at once (1,000 trials x 4 ranks started in
  // one turn, each rank connecting twice) share it until each takes longer
  // than ZeroMQ's 30 s handshake timeout, and the ranks retry: trials wait
  // to start instead (connecting_full()).
  int max_connecting_ranks = 512;
  // The clock of every deadline above and of Rank::last_seen.
  NowFunction now = clock_now;
};

// How start() gave a trial its group.
enum class GroupSource {
  kLaunched,    // new processes, started now: their HELLOs are still to come
  kKept,        // live ranks of a finished trial (reuse) or of this trial's pause
  kPrestarted,  // fresh ranks started ahead (prestart), connected
  kSuspended,   // this trial's own ranks, waiting inside report() since its pause
  kHandedOver,  // a finished trial's ranks, which held this one's START (hand_over)
};

class WorkerGroups {
 public:
  WorkerGroups(Launcher& launcher, WorkerGroupOptions options);
  ~WorkerGroups();

  // Gives trial `trial_id` a group: a live idle one kept for it (its pause),
  // or with reuse any idle one, or a connected spare (prestart): its ranks
  // wait for START. Else one launched from `launch`. Throws what the
  // launcher throws.
  GroupSource start(const std::string& trial_id, int attempt, int master_port,
                    std::vector<std::vector<std::string>> gpus, const GroupLaunch& launch);

  // Whether launched ranks not yet connected reach max_connecting_ranks:
  // another launch waits for them.
  bool connecting_full() const {
    return options_.max_connecting_ranks > 0 &&
           connecting_ranks_ >= static_cast<size_t>(options_.max_connecting_ranks);
  }
  // Every rank of the trial's group said HELLO.
  void connected(const std::string& trial_id) { forget_connecting(trial_id); }

  // Whether a spare group should be started now (prestart, fewer spares
  // than running groups, spare_delay after the last group start).
  bool wants_spare() const { return lacks_spare() && now() >= spares_after_; }
  // Starts a spare group from `launch`, whose ranks say HELLO as attempt
  // `serial` of trial train::kSpareTrialId. Throws what the launcher throws.
  void add_spare(int serial, const GroupLaunch& launch);
  // Records the HELLO of a spare's rank; false when no spare has that rank
  // free for a process of that pid.
  bool spare_hello(int serial, int rank, int64_t pid, const Rank& hello);

  // Now, on the clock of the deadlines (WorkerGroupOptions::now): a rank's
  // last_seen is set from it.
  Clock::time_point now() const { return options_.now(); }

  bool reuses() const { return options_.reuse; }
  // Whether ranks wait for another START after DONE instead of exiting (the
  // worker's reuse flag): true when groups may be kept.
  bool ranks_wait_after_done() const { return options_.reuse || options_.keep_paused; }
  // Whether a group whose ranks all said DONE can be kept for `pausing`'s
  // resume (keep_paused), or for any trial (reuse).
  bool can_keep(bool pausing) const { return options_.reuse || (options_.keep_paused && pausing); }
  // Whether the launcher has room for a group of `per_rank` now.
  bool can_place(const Resources& per_rank) const { return launcher_.can_place(per_rank); }
  // The most ranks of an elastic group the launcher has room for now (Launcher::max_ranks).
  int max_ranks(const Resources& per_rank) const { return launcher_.max_ranks(per_rank); }

  Group* find(const std::string& trial_id);
  const Group* find(const std::string& trial_id) const;
  // The group's rank `rank` if it belongs to `attempt` of the trial.
  Rank* find_rank(const std::string& trial_id, int attempt, int rank);

  // SIGTERM to the group now, SIGKILL after kill_grace.
  void terminate(const std::string& trial_id);
  // SIGKILL to the group now.
  void kill(const std::string& trial_id);
  // Starts the settle time of a group whose ranks all exited (again, when
  // the controller waits longer for what it needs to judge the end).
  void settle(const std::string& trial_id);
  // Ends the trial's group, returning it: with `keep`, its ranks (every one
  // said DONE) wait idle for the next trial (with reuse) or for this trial's
  // resume (always, when they are suspended); else they are killed.
  Group release(const std::string& trial_id, bool keep);

  // Gives the group of `from`, whose ranks all said DONE and run trial `to`
  // now (it was handed to them ahead: tune/execution/hand_ahead.h), to attempt
  // `attempt` of `to`, with the rendezvous port its START named.
  void hand_over(const std::string& from, const std::string& to, int attempt, int master_port);

  // One descriptor to poll for every running group's exits: readable when
  // a rank of some group may have exited (tune/launch/exit_watch.h).
  int exit_fd() const { return exits_.fd(); }
  // The running trials a rank of which may have exited, in id order: reap() them.
  std::vector<std::string> exited() { return exits_.ready(); }
  // The exits of the trial's ranks since the last call.
  std::vector<GroupEvent> reap(const std::string& trial_id);
  // Acts on due SIGKILL deadlines and reaps released groups; returns expired
  // settle times and missed heartbeats. `now` is on this clock (now()).
  // Looks only at the groups with a deadline due (a queue of them), not at
  // every group.
  std::vector<GroupEvent> check_deadlines(Clock::time_point now);
  // The earliest deadline the loop must wake for (a settle time, a SIGKILL,
  // a spare's start), or `latest`.
  Clock::time_point next_deadline(Clock::time_point latest);

  // Whether an idle group kept for `trial_id` waits inside report().
  bool holds_suspended(const std::string& trial_id) const;
  // Kills the idle group kept for `trial_id`, if any: the trial will not resume.
  void discard_kept(const std::string& trial_id);

  // Kills every idle and spare group.
  void discard_idle();

 private:
  struct Idle {
    Group group;
    Clock::time_point since;
    std::string kept_for;  // the paused trial it waits for; empty: any trial (reuse)
  };
  struct Spare {
    Group group;
    int serial = 0;
  };
  bool lacks_spare() const {
    return options_.prestart && spares_.size() < std::min(groups_.size(), options_.max_spares);
  }
  std::optional<GroupSource> adopt_idle(Group& group, const std::string& trial_id);
  bool adopt_spare(Group& group);
  // Kills `processes` (after `delay`) and reaps them later, in
  // check_deadlines: nothing in the loop waits for a group to go.
  void let_go(std::unique_ptr<LaunchedGroup> processes,
              std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // Keeps the idle groups within max_idle (`suspended` false) or within
  // the bounds on suspended ones (true), letting the oldest go.
  void bound_idle(bool suspended);
  void forget_connecting(const std::string& trial_id);
  // Queues the group's next look at its deadlines, unless one as early is queued.
  void schedule(const std::string& trial_id, Group& group);
  // The group's own deadlines (check_deadlines' look at one group).
  void check_group(const std::string& trial_id, Group& group, Clock::time_point now,
                   std::vector<GroupEvent>& events);

  Launcher& launcher_;
  WorkerGroupOptions options_;
  size_t max_suspended_ranks_;           // options_'s, within an eighth of the open-file limit
  std::map<std::string, Group> groups_;  // by trial id
  std::vector<Idle> idle_;               // newest last
  std::vector<Spare> spares_;            // oldest first
  Clock::time_point spares_after_;       // no spare starts before (spare_delay)
  // Released groups sent SIGKILL (or to be sent it at kill_at), not yet
  // reaped (their destructors would kill them and wait).
  struct Dying {
    std::unique_ptr<LaunchedGroup> processes;
    std::optional<Clock::time_point> kill_at;
  };
  std::vector<Dying> dying_;
  // Launched groups whose ranks are not all connected: their sizes, and the sum.
  std::unordered_map<std::string, size_t> connecting_;
  size_t connecting_ranks_ = 0;
  ExitWatch exits_;  // the running groups' exit descriptors
  // The groups' next looks (Group::check_at), earliest first; an entry
  // whose group is gone or looks at another time since is passed over.
  struct Look {
    Clock::time_point at;
    std::string trial_id;
    bool operator>(const Look& other) const { return at > other.at; }
  };
  std::priority_queue<Look, std::vector<Look>, std::greater<>> looks_;
  // The groups' settle times and SIGKILLs, earliest first, for
  // next_deadline(), which drops those that passed or went.
  std::priority_queue<Look, std::vector<Look>, std::greater<>> wakes_;
};

}  // namespace tune
