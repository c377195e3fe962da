#include "train/worker_env.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>

#include "core/errors.h"

namespace train {
namespace {

using Lookup = std::function<const char*(const char*)>;

std::string require(const Lookup& lookup, const char* name) {
  const char* value = lookup(name);
  if (value == nullptr || *value == '\0') {
    throw tune::Error(fmt::format("worker environment variable {} is not set", name));
  }
  return value;
}

template <class T>
T number(const Lookup& lookup, const char* name) {
  std::string text = require(lookup, name);
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw tune::Error(
        fmt::format("worker environment variable {}='{}' is not a number", name, text));
  }
  return value;
}

}  // namespace

WorkerEnv WorkerEnv::from_environment() { return from_variables(std::getenv); }

WorkerEnv WorkerEnv::from_variables(const std::function<const char*(const char*)>& lookup) {
  WorkerEnv env;
  env.controller = require(lookup, kEnvController);
  env.trial_id = require(lookup, kEnvTrialId);
  // A Slurm job step's tasks share one environment: each knows its rank
  // from Slurm (tune/launch/slurm/launcher.h).
  const char* rank = lookup("RANK");
  env.rank = rank == nullptr && lookup("SLURM_PROCID") != nullptr
                 ? number<int>(lookup, "SLURM_PROCID")
                 : number<int>(lookup, "RANK");
  env.world_size = number<int>(lookup, "WORLD_SIZE");
  env.attempt = number<int>(lookup, kEnvAttempt);
  env.parent_pid = number<long>(lookup, kEnvParentPid);
  env.heartbeat_s = number<double>(lookup, kEnvHeartbeatS);
  env.curve_server_key = require(lookup, kEnvCurveServerKey);
  if (env.rank < 0 || env.rank >= env.world_size) {
    throw tune::Error(fmt::format("RANK={} is outside WORLD_SIZE={}", env.rank, env.world_size));
  }
  std::string key_file = require(lookup, kEnvCurveKeyFile);
  if (auto at = key_file.find("%t"); at != std::string::npos) {
    key_file.replace(at, 2, std::to_string(env.rank));
  }
  env.curve_keys = read_keypair(key_file);
  return env;
}

int free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    throw tune::Error(fmt::format("cannot find a free loopback port: {}", strerror(errno)));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace train

namespace tune {

bool is_worker() {
  const char* value = std::getenv(train::kEnvWorker);
  return value != nullptr && std::string_view(value) == "1";
}

}  // namespace tune
