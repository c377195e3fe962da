// WindDown (tune/execution/wind_down.h): the state of an interrupt and of a stop_all.
#include "tune/execution/wind_down.h"

#include <utility>

namespace tune {

bool WindDown::interrupt(std::string reason, Clock::time_point deadline) {
  if (interrupted_) return false;
  interrupted_ = true;
  interrupt_reason_ = std::move(reason);
  grace_deadline_ = deadline;
  return true;
}

bool WindDown::grace_expired(Clock::time_point now) {
  if (!grace_deadline_ || now < *grace_deadline_) return false;
  grace_deadline_.reset();
  return true;
}

bool WindDown::check_stop_all(const std::vector<std::shared_ptr<Stopper>>& stoppers) {
  if (stop_all_reason_) return false;
  for (const auto& stopper : stoppers) {
    if (!stopper->stop_all()) continue;
    stop_all_reason_ = stopper->reason();
    return true;
  }
  return false;
}

}  // namespace tune
