#include "tune/launch/sim/wire.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/errors.h"

namespace tune::sim {
namespace {

// Larger than any message: a launch names a few variables per rank.
constexpr size_t kMaxPacket = 1 << 20;

// Sends `message`; false when it would block (MSG_DONTWAIT in `flags`).
bool send_packet(int fd, const Json& message, int flags) {
  const std::vector<uint8_t> bytes = Json::to_msgpack(message);
  while (true) {
    if (::send(fd, bytes.data(), bytes.size(), flags | MSG_NOSIGNAL) >= 0) return true;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    throw Error(fmt::format("the simulated peers' channel failed: {}", strerror(errno)));
  }
}

}  // namespace

Json simulation_to_json(const SimulationSpec& s) {
  return {{"nodes", s.nodes},
          {"cpus_per_node", s.cpus_per_node},
          {"gpus_per_node", s.gpus_per_node},
          {"iteration_s", s.iteration_s},
          {"iteration_jitter", s.iteration_jitter},
          {"curve", s.curve},
          {"curve_table", s.curve_table.string()},
          {"rank_death_rate", s.rank_death_rate},
          {"node_loss_rate", s.node_loss_rate},
          {"node_recovery_s", s.node_recovery_s},
          {"late_report_rate", s.late_report_rate},
          {"late_report_s", s.late_report_s},
          {"seed", s.seed},
          {"time", s.time},
          {"heartbeat_timeout_s", s.heartbeat_timeout_s}};
}

SimulationSpec simulation_from_json(const Json& j) {
  return {.nodes = j.at("nodes").get<int>(),
          .cpus_per_node = j.at("cpus_per_node").get<int>(),
          .gpus_per_node = j.at("gpus_per_node").get<int>(),
          .iteration_s = j.at("iteration_s").get<double>(),
          .iteration_jitter = j.at("iteration_jitter").get<double>(),
          .curve = j.at("curve").get<std::string>(),
          .curve_table = j.at("curve_table").get<std::string>(),
          .rank_death_rate = j.at("rank_death_rate").get<double>(),
          .node_loss_rate = j.at("node_loss_rate").get<double>(),
          .node_recovery_s = j.at("node_recovery_s").get<double>(),
          .late_report_rate = j.at("late_report_rate").get<double>(),
          .late_report_s = j.at("late_report_s").get<double>(),
          .seed = j.at("seed").get<uint64_t>(),
          .time = j.at("time").get<std::string>(),
          .heartbeat_timeout_s = j.at("heartbeat_timeout_s").get<double>()};
}

void send_message(int fd, const Json& message) { send_packet(fd, message, 0); }

bool try_send_message(int fd, const Json& message) {
  return send_packet(fd, message, MSG_DONTWAIT);
}

std::optional<Json> receive_message(int fd) {
  static thread_local std::vector<uint8_t> buffer(kMaxPacket);
  while (true) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n > 0 && static_cast<size_t>(n) > buffer.size()) {
      throw Error(fmt::format("a simulation message of {} bytes, more than {}", n, buffer.size()));
    }
    if (n > 0) return Json::from_msgpack(buffer.begin(), buffer.begin() + n);
    if (n == 0) throw Error("the other end of the simulated peers' channel is gone");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
    throw Error(fmt::format("the simulated peers' channel failed: {}", strerror(errno)));
  }
}

}  // namespace tune::sim
