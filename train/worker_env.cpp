#include "train/worker_env.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "core/errors.h"

namespace train {
namespace {

std::string require(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    throw tune::Error(fmt::format("worker environment variable {} is not set", name));
  }
  return value;
}

template <class T>
T number(const char* name) {
  std::string text = require(name);
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw tune::Error(
        fmt::format("worker environment variable {}='{}' is not a number", name, text));
  }
  return value;
}

}  // namespace

WorkerEnv WorkerEnv::from_environment() {
  WorkerEnv env;
  env.controller = require(kEnvController);
  env.trial_id = require(kEnvTrialId);
  env.rank = number<int>("RANK");
  env.world_size = number<int>("WORLD_SIZE");
  env.attempt = number<int>(kEnvAttempt);
  env.parent_pid = number<long>(kEnvParentPid);
  env.heartbeat_s = number<double>(kEnvHeartbeatS);
  if (env.rank < 0 || env.rank >= env.world_size) {
    throw tune::Error(fmt::format("RANK={} is outside WORLD_SIZE={}", env.rank, env.world_size));
  }
  return env;
}

}  // namespace train

namespace tune {

bool is_worker() {
  const char* value = std::getenv(train::kEnvWorker);
  return value != nullptr && std::string_view(value) == "1";
}

}  // namespace tune
