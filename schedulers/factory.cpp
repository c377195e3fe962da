#include <fmt/format.h>

#include "schedulers/fifo.h"
#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

std::unique_ptr<TrialScheduler> make_scheduler(const std::string& type, const Json& options) {
  if (type == "fifo") {
    for (const auto& [key, value] : options.items()) {
      throw ConfigError("the fifo scheduler takes no options", {}, 0, key);
    }
    return std::make_unique<FifoScheduler>();
  }
  throw ConfigError(fmt::format("unknown scheduler '{}'; known: fifo", type), {}, 0, "type");
}

}  // namespace tune::schedulers
