// The Slurm launcher's allocation and node states (tune/launch/slurm/state.h).
#include "tune/launch/slurm/state.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "core/errors.h"

extern char** environ;

namespace tune::detail {
namespace {

// What `command` (a shell command line) writes on stdout; nullopt when it
// cannot run or exits with an error.
std::optional<std::string> read_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) return std::nullopt;
  return out;
}

// Slurm's characters in node lists ("n[1-2],gpu07"): the lists go into shell commands.
void check_nodelist(const std::string& nodelist, std::string_view source) {
  if (nodelist.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "-_.,[]") != std::string::npos) {
    throw ConfigError(fmt::format("{}='{}' is not a Slurm node list", source, nodelist));
  }
}

// One line per node from sinfo: "NAME STATE". Empty when sinfo fails (the
// states are then left as they were).
std::vector<std::pair<std::string, std::string>> read_node_states(
    const std::vector<SlurmNode>& nodes) {
  std::string names;
  for (const auto& node : nodes) names += (names.empty() ? "" : ",") + node.name;
  std::istringstream lines(
      read_command(fmt::format("sinfo -h -N -n '{}' -o '%N %t' 2>/dev/null", names)).value_or(""));
  std::vector<std::pair<std::string, std::string>> states;
  for (std::string name, state; lines >> name >> state;) states.emplace_back(name, state);
  return states;
}

}  // namespace

std::string require_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    throw ConfigError(
        fmt::format("{} is not set: the slurm launcher runs inside an allocation "
                    "(salloc or sbatch)",
                    name));
  }
  return value;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
  }
  throw Error(fmt::format("{} is not on PATH: the slurm launcher needs Slurm's clients", name));
}

std::vector<std::string> expand_hostnames(const std::string& nodelist, std::string_view source) {
  check_nodelist(nodelist, source);
  const auto out = read_command(fmt::format("scontrol show hostnames '{}'", nodelist));
  std::vector<std::string> names;
  std::istringstream lines(out.value_or(""));
  for (std::string name; lines >> name;) names.push_back(name);
  if (names.empty()) throw Error(fmt::format("`scontrol show hostnames {}` failed", nodelist));
  return names;
}

void read_job_gpus(SlurmAllocation& allocation) {
  const auto out =
      read_command(fmt::format("scontrol show -d job '{}' 2>/dev/null", allocation.job_id));
  if (!out) throw Error(fmt::format("`scontrol show -d job {}` failed", allocation.job_id));
  for (const auto& [nodelist, gpus] : parse_job_gpus(*out)) {
    for (const auto& name : expand_hostnames(nodelist, "scontrol show -d job: Nodes")) {
      const int node = allocation.find(name);
      if (node >= 0) allocation.nodes[node].gpus = gpus;
    }
  }
}

std::vector<std::string> environment() {
  std::vector<std::string> env;
  for (char** var = environ; *var != nullptr; ++var) env.emplace_back(*var);
  return env;
}

bool wait_ok(ChildProcess& child, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!child.try_reap()) {
    if (Clock::now() > deadline) {
      ::kill(child.pid(), SIGKILL);
      while (!child.try_reap()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return child.exit_status()->ok();
}

std::string last_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) last = line;
  }
  return last;
}

std::string read_from(const std::filesystem::path& file, std::uintmax_t offset) {
  std::ifstream in(file, std::ios::binary);
  if (!in.seekg(static_cast<std::streamoff>(offset))) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::optional<std::vector<std::string>> running_steps(const std::string& job_id) {
  const auto out = read_command(fmt::format("squeue -h -s -j '{}' -o '%j' 2>/dev/null", job_id));
  if (!out) return std::nullopt;
  std::vector<std::string> names;
  std::istringstream lines(*out);
  for (std::string name; std::getline(lines, name);) names.push_back(name);
  return names;
}

std::optional<std::vector<std::string>> job_nodes(const std::string& job_id) {
  const auto out = read_command(fmt::format("scontrol show job -o '{}' 2>/dev/null", job_id));
  if (!out) return std::nullopt;
  const std::string list = parse_job_nodelist(*out);
  if (list.empty()) return std::vector<std::string>{};
  try {
    return expand_hostnames(list, "scontrol show job: NodeList");
  } catch (const Error&) {
    return std::nullopt;
  }
}

SlurmState::~SlurmState() {
  for (auto& probe : probes) {
    ::kill(probe.srun.pid(), SIGKILL);
    wait_ok(probe.srun, kProbeTimeout);
  }
}

void SlurmState::probe_failed(SlurmNode& node, const std::string& why) {
  const auto nodes = job_nodes(allocation.job_id);
  if (nodes && std::find(nodes->begin(), nodes->end(), node.name) == nodes->end()) {
    note(node_left(node, allocation.job_id));
  } else {
    note(node_failed(node, why));
  }
}

void SlurmState::poll_slurm() {
  last_poll = Clock::now();
  next_poll = last_poll + poll_period;
  for (const auto& [name, state] : read_node_states(allocation.nodes)) {
    const int node = allocation.find(name);
    if (node >= 0) note(apply_slurm_state(allocation.nodes[node], state));
  }
}

void SlurmState::refresh() {
  const auto now = Clock::now();
  for (auto it = probes.begin(); it != probes.end();) {
    SlurmNode& node = allocation.nodes[it->node];
    if (it->srun.try_reap()) {
      if (it->srun.exit_status()->ok()) {
        note(probe_passed(node));
      } else {
        probe_failed(node, "a probe step there " + it->srun.exit_status()->describe());
      }
    } else if (now > it->deadline) {
      ::kill(it->srun.pid(), SIGKILL);
      wait_ok(it->srun, kProbeTimeout);
      probe_failed(node,
                   fmt::format("a probe step there did not end in {} s", kProbeTimeout.count()));
    } else {
      ++it;
      continue;
    }
    it = probes.erase(it);
  }
  auto probing = [&](int node) {
    return std::any_of(probes.begin(), probes.end(),
                       [&](const Probe& p) { return p.node == node; });
  };
  bool unprobed = false;
  for (size_t i = 0; i < allocation.nodes.size(); ++i) {
    unprobed |= allocation.nodes[i].health == NodeHealth::kSuspected && !probing(i);
  }
  // A suspected node Slurm reports down is not probed: its state is read
  // again soon, not at every turn.
  if ((unprobed && now >= last_poll + kRecheckPeriod) || now >= next_poll) poll_slurm();
  for (size_t i = 0; i < allocation.nodes.size(); ++i) {
    const SlurmNode& node = allocation.nodes[i];
    if (node.health != NodeHealth::kSuspected || node.slurm_down || probing(i)) continue;
    SpawnOptions spawn;
    spawn.argv = srun_argv({"--job-name=tunerun-probe", "--nodelist=" + node.name, "--nodes=1",
                            "--ntasks=1", "--overlap", "true"});
    spawn.env = environment();
    spawn.log_file = "/dev/null";
    probes.push_back({static_cast<int>(i), ChildProcess::spawn(spawn), now + kProbeTimeout});
  }
}

}  // namespace tune::detail
