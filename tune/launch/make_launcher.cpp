#include "tune/launch/make_launcher.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ifaddrs.h>

#include <cstdlib>
#include <set>

#include "core/errors.h"
#include "tune/launch/local/launcher.h"
#include "tune/launch/local/zygote.h"
#include "tune/launch/sim/launcher.h"
#include "tune/launch/slurm/launcher.h"
#include "tune/launch/ssh/launcher.h"

namespace tune {
namespace {

// A ConfigError at `key`, located in the sweep file when the spec came from one.
ConfigError error_at(const ExperimentSpec& spec, const std::string& key,
                     const std::string& message) {
  return ConfigError(message, spec.sweep_file, 0, key);
}

// The address the settings name, from an interface when they name one; empty: none.
std::string settings_address(const ExperimentSpec& spec) {
  if (!spec.cluster.control_address.empty()) return spec.cluster.control_address;
  if (spec.cluster.control_interface.empty()) return {};
  try {
    return interface_address(spec.cluster.control_interface);
  } catch (const ConfigError& e) {
    throw error_at(spec, e.key(), e.message());
  }
}

// Launcher "ssh": the hostfile's hosts, which reach the controller at the
// address check_control_address has passed.
std::shared_ptr<Launcher> make_ssh_launcher(const ExperimentSpec& spec,
                                            const LaunchContext& context) {
  try {
    check_ssh_cluster(spec);
  } catch (const ConfigError& e) {
    throw error_at(spec, e.key(), e.message());
  }
  SshLauncherOptions options{
      .ssh_config = spec.cluster.ssh_config,
      .retry_s = spec.cluster.ssh_retry_s,
      .retire_after = spec.cluster.ssh_retire_after,
      .rank_shim = find_ssh_rank_shim(context.worker_argv0, context.program_dirs)};
  return std::make_shared<SshLauncher>(read_hostfile(spec.cluster.hostfile), options);
}

}  // namespace

bool loopback_address(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    const uint32_t host = ntohl(v4.s_addr);
    return (host >> 24) == 127 || host == 0;  // 127.0.0.0/8, or 0.0.0.0 (this host)
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, address.c_str(), &v6) == 1 &&
         (IN6_IS_ADDR_LOOPBACK(&v6) || IN6_IS_ADDR_UNSPECIFIED(&v6));
}

void check_control_address(const ExperimentSpec& spec) {
  const std::string kind = resolve_launcher(spec.cluster.launcher);
  if (kind != "slurm" && kind != "ssh") return;
  const std::string address = settings_address(spec);
  if (address.empty() || !loopback_address(address)) return;
  const bool from_interface = spec.cluster.control_address.empty();
  throw error_at(
      spec, from_interface ? "cluster.control_interface" : "cluster.control_address",
      fmt::format(
          "{} is a loopback address{}: the {} launcher's ranks run on other nodes and cannot "
          "reach the controller there. Give the address of an interface the nodes route to "
          "(`ip -4 -brief addr` lists them; `hostname -I` prints the non-loopback ones, where "
          "`hostname -i` often prints 127.0.0.1), or control_interface = the name of that "
          "interface (\"eth0\", \"ib0\")",
          address,
          from_interface ? fmt::format(" (interface {})", spec.cluster.control_interface) : "",
          kind));
}

std::string resolve_launcher(const std::string& launcher) {
  if (launcher != "auto") return launcher;
  return std::getenv("SLURM_JOB_ID") != nullptr ? "slurm" : "local";
}

std::string interface_address(const std::string& name) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw Error("cannot list this host's network interfaces");
  std::string address;
  std::set<std::string> names;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    names.insert(i->ifa_name);
    if (name != i->ifa_name || !address.empty()) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    address = text;
  }
  freeifaddrs(list);
  if (address.empty()) {
    throw ConfigError::at_key("cluster.control_interface",
                              fmt::format("no interface '{}' with an IPv4 address on this host "
                                          "(these have one: {})",
                                          name, fmt::join(names, ", ")));
  }
  return address;
}

std::string interface_of(const std::string& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string name;
  for (ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (address == text) name = i->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

std::string control_address_for(const ExperimentSpec& spec) {
  std::string address = settings_address(spec);
  return address.empty() ? "127.0.0.1" : address;
}

LauncherChoice make_launcher(const ExperimentSpec& spec, const LaunchContext& context) {
  LauncherChoice choice;
  choice.kind = resolve_launcher(spec.cluster.launcher);
  choice.control_address = settings_address(spec);
  check_control_address(spec);
  if (choice.kind == "slurm") {
    if (std::getenv("SLURM_JOB_ID") == nullptr) {
      throw error_at(spec, "cluster.launcher",
                     "launcher \"slurm\" runs inside a Slurm allocation (salloc or sbatch: "
                     "SLURM_JOB_ID is not set); use \"local\" or \"auto\" outside one");
    }
    if (choice.control_address.empty()) {
      throw error_at(spec, "cluster.control_address",
                     "the slurm launcher needs the address the nodes reach the controller at: "
                     "--control-address, or control_address / control_interface in [cluster] "
                     "(RunConfig's cluster in C++ and Python); the ranks run on other nodes and "
                     "cannot reach 127.0.0.1");
    }
    choice.launcher =
        std::make_shared<SlurmLauncher>(read_slurm_allocation(), spec.cluster.slurm_poll_s,
                                        spec.cluster.node_wait_s, spec.cluster.end_margin_s);
    return choice;
  }
  if (choice.kind == "ssh") {
    if (choice.control_address.empty()) {  // none is loopback, which the hosts cannot reach
      ExperimentSpec unset = spec;
      unset.cluster.control_address = "127.0.0.1";
      check_control_address(unset);
    }
    choice.launcher = make_ssh_launcher(spec, context);
    return choice;
  }
  if (choice.control_address.empty()) choice.control_address = "127.0.0.1";
  if (choice.kind == "sim") {
    SimulationSpec simulation = spec.simulation;
    simulation.heartbeat_timeout_s = spec.heartbeat_timeout_s;
    choice.launcher = make_sim_launcher(simulation, context.worker_argv0, context.program_dirs);
    return choice;
  }
  if (choice.kind != "local") {
    throw error_at(spec, "cluster.launcher",
                   fmt::format("'{}' is not a launcher; use \"local\", \"slurm\", \"auto\", "
                               "\"sim\" or \"ssh\"",
                               spec.cluster.launcher));
  }
  if (!context.zygote_argv.empty()) {
    choice.launcher = std::make_shared<ZygoteLauncher>(context.zygote_argv, context.worker_argv);
  } else {
    choice.launcher = std::make_shared<LocalLauncher>();
  }
  return choice;
}

}  // namespace tune
