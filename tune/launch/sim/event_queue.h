// EventQueue: the simulated peers' one schedule (tune/launch/sim/peer_host.h).
// Every timer of every simulated rank and node (an iteration's end, a
// heartbeat, a death, a node's loss and return) is an event here, ordered
// by due time and then by when it was scheduled, and "now" has one source:
// the clock it is given. The peers never sleep; the host's loop waits for
// the earliest event (next_due) and runs what is due (run_due). In virtual
// time the clock is the simulation's, which the host moves to next_due (or
// the controller's deadline) instead of waiting for it.
//
// Not thread-safe; owned by the peers' event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_set>
#include <vector>

#include "tune/system/clock.h"

namespace tune::sim {

class EventQueue {
 public:
  using Id = uint64_t;

  explicit EventQueue(NowFunction now = Clock::now) : now_(std::move(now)) {}

  Clock::time_point now() const { return now_(); }

  // Runs `action` once `due` has come (at once, in the next run_due, when
  // it already has). Returns an id for cancel().
  Id schedule(Clock::time_point due, std::function<void()> action) {
    const Id id = ++last_id_;
    events_.push({due, id, std::move(action)});
    pending_.insert(id);
    return id;
  }
  Id after(double seconds, std::function<void()> action) {
    return schedule(
        now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)),
        std::move(action));
  }
  // The event will not run; an id that ran or is 0 is no error. (A
  // cancelled event leaves the queue when it would have been due.)
  void cancel(Id id) { pending_.erase(id); }

  // When the earliest event is due; nullopt when none waits.
  std::optional<Clock::time_point> next_due() {
    drop_cancelled();
    if (events_.empty()) return std::nullopt;
    return events_.top().due;
  }

  // Runs every event due by now, earliest first (events they schedule for
  // now or earlier run too).
  void run_due() {
    const auto now = this->now();
    while (true) {
      drop_cancelled();
      if (events_.empty() || events_.top().due > now) return;
      auto action = std::move(const_cast<Event&>(events_.top()).action);
      pending_.erase(events_.top().id);
      events_.pop();
      action();
    }
  }

 private:
  struct Event {
    Clock::time_point due;
    Id id = 0;
    std::function<void()> action;
    // The priority queue's top is the earliest, then the first scheduled.
    bool operator<(const Event& other) const {
      return due != other.due ? due > other.due : id > other.id;
    }
  };
  void drop_cancelled() {
    while (!events_.empty() && !pending_.contains(events_.top().id)) events_.pop();
  }

  NowFunction now_;
  std::priority_queue<Event> events_;
  std::unordered_set<Id> pending_;  // scheduled, neither run nor cancelled
  Id last_id_ = 0;
};

}  // namespace tune::sim
