// RefusalLog (tune/execution/refusal_log.h): refused peers named, per address at a bounded rate.
#include "tune/execution/refusal_log.h"

#include <fmt/format.h>

namespace tune {

std::optional<std::string> RefusalLog::line(const Refusal& refusal, Clock::time_point now) {
  // Many addresses: those quiet for a whole period are forgotten.
  constexpr size_t kMaxAddresses = 4096;
  if (addresses_.size() >= kMaxAddresses) {
    std::erase_if(addresses_,
                  [&](const auto& entry) { return now - entry.second.logged >= quiet_; });
  }
  const auto key = std::pair(refusal.address, refusal.ended_group);
  auto it = addresses_.find(key);
  if (it != addresses_.end() && now - it->second.logged < quiet_) {
    ++it->second.unwritten;
    return std::nullopt;
  }
  const int64_t unwritten = it == addresses_.end() ? 0 : it->second.unwritten;
  addresses_[key] = Address{now, 0};
  const std::string from =
      refusal.address.empty() ? "a peer whose address is unknown" : refusal.address;
  const std::string more =
      unwritten == 0 ? ""
                     : fmt::format(" (and {} more from there since the last such line)", unwritten);
  return fmt::format("{}refused a connection to the control channel from {}: {}{}",
                     refusal.ended_group ? "" : "warning: ", from, refusal.why, more);
}

}  // namespace tune
