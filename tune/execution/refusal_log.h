// RefusalLog: which refused control-channel connections (tune/channel/zap_handler.h)
// the run log names. Each refused peer is named, with its address and why;
// but one address at most once per quiet period, since a refused peer
// reconnects and is refused again and again (ZeroMQ retries every 100 ms):
// the next line for that address says how many refusals went unwritten
// meanwhile. A finished rank's late connection and an outsider's are
// counted apart, so that the first never hides the second.
//
// Owned by the controller's event loop; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "tune/channel/zap_handler.h"
#include "tune/system/clock.h"

namespace tune {

class RefusalLog {
 public:
  explicit RefusalLog(std::chrono::seconds quiet = std::chrono::seconds(10)) : quiet_(quiet) {}

  // The line to log for `refusal`, seen `now`; nullopt while its address
  // had a line less than the quiet period ago.
  std::optional<std::string> line(const Refusal& refusal, Clock::time_point now);

 private:
  struct Address {
    Clock::time_point logged;
    int64_t unwritten = 0;  // refusals since `logged` that had no line
  };
  std::chrono::seconds quiet_;
  std::map<std::pair<std::string, bool>, Address> addresses_;  // (address, ended_group)
};

}  // namespace tune
