// The controller's clocks: the steady clock its deadlines are on
// (heartbeats, settle and kill times, spare starts, an interrupt's grace,
// a time budget) and the wall clock of every timestamp it stores
// (unix_now), read through one process-wide source: the real clocks, unless
// a simulation in virtual time (launcher "sim", [simulation] time =
// "virtual") holds a VirtualTime, whose "now" moves only when the
// simulation says (tune/launch/lockstep.h). NowFunction is the type of a source of
// "now" a part may be given instead (a test's own clock).
//
// Virtual time starts at kVirtualStart on the steady clock and at
// kVirtualUnixStart (2000-01-01 00:00:00 UTC) on the wall clock, the same
// in every run: two runs of one sweep store the same timestamps.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace tune {

using Clock = std::chrono::steady_clock;
using NowFunction = std::function<Clock::time_point()>;

inline constexpr Clock::time_point kVirtualStart{std::chrono::hours(1)};
inline constexpr double kVirtualUnixStart = 946684800;

namespace internal {
// Nanoseconds of virtual time since kVirtualStart; negative: real time.
inline std::atomic<int64_t> virtual_ns{-1};
}  // namespace internal

// Now on the controller's steady clock.
inline Clock::time_point clock_now() {
  const int64_t ns = internal::virtual_ns.load(std::memory_order_relaxed);
  return ns < 0 ? Clock::now() : kVirtualStart + std::chrono::nanoseconds(ns);
}

// Now in unix seconds, as every timestamp in the store.
inline double unix_now() {
  const int64_t ns = internal::virtual_ns.load(std::memory_order_relaxed);
  if (ns >= 0) return kVirtualUnixStart + static_cast<double>(ns) * 1e-9;
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// While one lives, the process's clocks are virtual, starting at
// kVirtualStart; set() moves them. One at a time per process.
class VirtualTime {
 public:
  VirtualTime() { internal::virtual_ns.store(0); }
  ~VirtualTime() { internal::virtual_ns.store(-1); }
  VirtualTime(const VirtualTime&) = delete;
  VirtualTime& operator=(const VirtualTime&) = delete;

  // Virtual now becomes `now` (never earlier than it was).
  static void set(Clock::time_point now) {
    const int64_t ns = std::chrono::nanoseconds(now - kVirtualStart).count();
    if (ns > internal::virtual_ns.load()) internal::virtual_ns.store(ns);
  }
};

}  // namespace tune
