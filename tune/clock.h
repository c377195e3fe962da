// The steady clock the controller's deadlines are on (heartbeats, settle and
// kill times, spare starts, an interrupt's grace), and the type of a source
// of its "now": the real clock unless a test, or a simulation in virtual
// time, gives one of its own (WorkerGroupOptions::now).
#pragma once

#include <chrono>
#include <functional>

namespace tune {

using Clock = std::chrono::steady_clock;
using NowFunction = std::function<Clock::time_point()>;

}  // namespace tune
