// The Slurm launcher's allocation and node states (tune/launch/slurm/state.h).
#include "tune/launch/slurm/state.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

namespace {

// "0-1,3" as {0, 1, 3}; empty when it is not such a list.
std::vector<int> parse_task_list(std::string_view text) {
  std::vector<int> tasks;
  while (!text.empty()) {
    const std::string_view item = text.substr(0, text.find(','));
    text = item.size() < text.size() ? text.substr(item.size() + 1) : "";
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    const std::string_view a = item.substr(0, dash);
    auto [end_a, ec_a] = std::from_chars(a.data(), a.data() + a.size(), first);
    if (ec_a != std::errc() || end_a != a.data() + a.size()) return {};
    last = first;
    if (dash != std::string_view::npos) {
      const std::string_view b = item.substr(dash + 1);
      auto [end_b, ec_b] = std::from_chars(b.data(), b.data() + b.size(), last);
      if (ec_b != std::errc() || end_b != b.data() + b.size() || last < first) return {};
    }
    for (int t = first; t <= last; ++t) tasks.push_back(t);
  }
  return tasks;
}

// srun's words for a task's end: "Exited with exit code 3", or the
// signal's description ("Killed", "Segmentation fault (core dumped)").
std::optional<ExitStatus> parse_task_end(std::string_view text) {
  constexpr std::string_view kExited = "Exited with exit code ";
  ExitStatus status;
  if (text.starts_with(kExited)) {
    text.remove_prefix(kExited.size());
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), status.code);
    if (ec != std::errc()) return std::nullopt;
    return status;
  }
  if (const size_t core = text.find(" (core dumped)"); core != std::string_view::npos) {
    text = text.substr(0, core);
  }
  for (int signal = 1; signal < NSIG; ++signal) {
    const char* name = strsignal(signal);
    if (name != nullptr && text == name) return ExitStatus{0, signal, true};
  }
  return std::nullopt;
}

}  // namespace

std::vector<TaskExit> read_task_exits(std::string_view srun_output) {
  std::vector<TaskExit> exits;
  while (!srun_output.empty()) {
    const size_t newline = srun_output.find('\n');
    std::string_view line = srun_output.substr(0, newline);
    srun_output = newline == std::string_view::npos ? "" : srun_output.substr(newline + 1);
    if (!line.starts_with("srun: error: ")) continue;
    // "srun: error: NODE: task(s) LIST: END"
    size_t at = line.find(": task ");
    size_t skip = 7;
    if (at == std::string_view::npos) {
      at = line.find(": tasks ");
      skip = 8;
    }
    if (at == std::string_view::npos) continue;
    const std::string_view rest = line.substr(at + skip);
    const size_t colon = rest.find(": ");
    if (colon == std::string_view::npos) continue;
    const auto status = parse_task_end(rest.substr(colon + 2));
    if (!status) continue;
    for (int task : parse_task_list(rest.substr(0, colon))) {
      const bool named = std::any_of(exits.begin(), exits.end(),
                                     [&](const TaskExit& e) { return e.task == task; });
      if (!named) exits.push_back({task, *status});
    }
  }
  return exits;
}

std::optional<double> parse_time_left(std::string_view text) {
  if (text.empty() || text == "UNLIMITED" || text == "NOT_SET" || text == "INVALID") {
    return std::nullopt;
  }
  double days = 0;
  if (const size_t dash = text.find('-'); dash != std::string_view::npos) {
    int d = 0;
    std::from_chars(text.data(), text.data() + dash, d);
    days = d;
    text.remove_prefix(dash + 1);
  }
  double seconds = 0;
  while (!text.empty()) {
    const size_t colon = text.find(':');
    int part = 0;
    const std::string_view item = text.substr(0, colon);
    if (std::from_chars(item.data(), item.data() + item.size(), part).ec != std::errc()) {
      return std::nullopt;
    }
    seconds = seconds * 60 + part;
    text = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  }
  return days * 86400 + seconds;
}

std::optional<JobState> read_job_state(const std::string& job_id) {
  FILE* pipe = popen(fmt::format("squeue -h -j '{}' -o '%T %L' 2>&1", job_id).c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[1024];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  JobState job;
  if (status != 0) {
    // A job Slurm purged: "slurm_load_jobs error: Invalid job id specified".
    if (out.find("Invalid job id") == std::string::npos) return std::nullopt;
    job.ended = true;
    job.state = "no longer known to Slurm";
    return job;
  }
  std::istringstream line(out);
  std::string left;
  if (!(line >> job.state)) {
    job.ended = true;
    job.state = "no longer listed by squeue";
    return job;
  }
  line >> left;
  job.ended = job.state != "RUNNING" && job.state != "SUSPENDED";
  job.time_left_s = parse_time_left(left);
  return job;
}

bool step_cancelled_by_slurm(std::string_view srun_output) {
  for (std::string_view said : {"Job step aborted", " CANCELLED AT ", "DUE TO TIME LIMIT",
                                "DUE TO PREEMPTION", "DUE TO JOB REQUEUE"}) {
    if (srun_output.find(said) != std::string_view::npos) return true;
  }
  return false;
}

std::vector<ListedStep> parse_listed_steps(std::string_view squeue_output) {
  std::vector<ListedStep> steps;
  std::istringstream lines{std::string(squeue_output)};
  for (std::string line; std::getline(lines, line);) {
    const size_t bar = line.rfind('|');
    if (bar == std::string::npos) continue;
    steps.push_back({line.substr(0, bar), line.substr(bar + 1)});
  }
  return steps;
}

std::optional<std::vector<ListedStep>> running_steps(const std::string& job_id) {
  const auto out = read_command(fmt::format("squeue -h -s -j '{}' -o '%j|%N' 2>/dev/null", job_id));
  if (!out) return std::nullopt;
  return parse_listed_steps(*out);
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
  if (job_end.empty()) {
    if (const auto job = read_job_state(allocation.job_id)) {
      if (job->ended) {
        job_end = fmt::format("allocation {} ended (Slurm: {})", allocation.job_id, job->state);
        return;
      }
      if (job->time_left_s) {
        ends_at = last_poll + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(*job->time_left_s));
      }
    }
  }
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
      if (!job_end.empty()) {
        // The allocation's end, not the node's.
      } else if (it->srun.exit_status()->ok()) {
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
  // Once the allocation ended, no step can run: a probe would retire its node.
  if (!job_end.empty()) return;
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
