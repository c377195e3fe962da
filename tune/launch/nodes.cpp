#include "tune/launch/nodes.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <utility>

#include "core/errors.h"

namespace tune {

const char* to_string(NodeHealth health) {
  switch (health) {
    case NodeHealth::kUsable:
      return "usable";
    case NodeHealth::kSuspected:
      return "suspected";
    case NodeHealth::kDown:
      return "failed once";
    case NodeHealth::kRetired:
      return "retired";
  }
  return "?";
}

int SlurmAllocation::total_cpus() const {
  int total = 0;
  for (const auto& node : nodes) total += node.cpus;
  return total;
}

int SlurmAllocation::total_gpus() const {
  int total = 0;
  for (const auto& node : nodes) total += node.gpus;
  return total;
}

int SlurmAllocation::find(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> SlurmAllocation::failure_counts(const std::vector<int>& group) const {
  std::vector<int> counts;
  for (int node : group) counts.push_back(nodes[node].failures);
  return counts;
}

const SlurmNode* SlurmAllocation::failed_since(const std::vector<int>& group,
                                               const std::vector<int>& at_launch) const {
  for (size_t r = 0; r < group.size(); ++r) {
    if (nodes[group[r]].failures > at_launch[r]) return &nodes[group[r]];
  }
  return nullptr;
}

std::vector<int> parse_cpus_per_node(std::string_view text) {
  std::vector<int> counts;
  auto malformed = [&] {
    return ConfigError(
        fmt::format("SLURM_JOB_CPUS_PER_NODE='{}' is malformed; expected e.g. "
                    "'2(x3),1'",
                    text));
  };
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    int cpus = 0, repeat = 1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), cpus);
    if (ec != std::errc() || cpus <= 0) throw malformed();
    std::string_view tail(end, item.data() + item.size() - end);
    if (!tail.empty()) {
      if (!tail.starts_with("(x") || !tail.ends_with(")")) throw malformed();
      auto [e2, ec2] = std::from_chars(tail.data() + 2, tail.data() + tail.size() - 1, repeat);
      if (ec2 != std::errc() || e2 != tail.data() + tail.size() - 1 || repeat <= 0) {
        throw malformed();
      }
    }
    counts.insert(counts.end(), repeat, cpus);
  }
  if (counts.empty()) throw malformed();
  return counts;
}

namespace {

// The number of devices in an index list: "0-1,3" is 3.
int count_indices(std::string_view list) {
  int count = 0;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
    int first = 0, last = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), first);
    if (ec != std::errc()) return -1;
    last = first;
    if (end != item.data() + item.size()) {
      if (*end != '-') return -1;
      auto [e2, ec2] = std::from_chars(end + 1, item.data() + item.size(), last);
      if (ec2 != std::errc() || e2 != item.data() + item.size() || last < first) return -1;
    }
    count += last - first + 1;
  }
  return count;
}

// The GPUs in one GRES value: "gpu:2(IDX:0-1)", "gpu:a100:1(IDX:3),gpu:v100:1(IDX:0)",
// "gpu:a100:2", "gpu(IDX:0-1)"; other kinds of GRES count 0.
int gpus_in_gres(std::string_view gres) {
  int total = 0;
  while (!gres.empty()) {
    // Items are separated by commas outside parentheses (IDX lists hold commas).
    size_t end = 0;
    for (int depth = 0; end < gres.size() && (depth > 0 || gres[end] != ','); ++end) {
      depth += gres[end] == '(' ? 1 : gres[end] == ')' ? -1 : 0;
    }
    const std::string_view item = gres.substr(0, end);
    gres = end < gres.size() ? gres.substr(end + 1) : "";
    const size_t paren = std::min(item.find('('), item.size());
    const std::string_view name = item.substr(0, paren);
    const std::string_view detail = item.substr(paren);  // "(IDX:0-1)", or empty
    if (name != "gpu" && !name.starts_with("gpu:")) continue;
    // The devices' indices when Slurm lists them, else the count in the name.
    int n = -1;
    if (detail.starts_with("(IDX:") && detail.ends_with(')')) {
      n = count_indices(detail.substr(5, detail.size() - 6));
    }
    const std::string_view count = name.substr(name.rfind(':') + 1);
    if (n < 0 && name != "gpu" && count.find_first_not_of("0123456789") == std::string_view::npos) {
      std::from_chars(count.data(), count.data() + count.size(), n);
    }
    if (n < 0) {
      throw ConfigError(
          fmt::format("cannot read the GPUs of GRES '{}' in `scontrol show job`", item));
    }
    total += n;
  }
  return total;
}

}  // namespace

std::vector<std::pair<std::string, int>> parse_job_gpus(std::string_view scontrol_job) {
  std::vector<std::pair<std::string, int>> nodes;
  std::string_view rest = scontrol_job;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? "" : rest.substr(newline + 1);
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    if (!line.starts_with("Nodes=")) continue;
    std::string names;
    int gpus = 0;
    while (!line.empty()) {
      const size_t space = line.find(' ');
      const std::string_view field = line.substr(0, space);
      line = space == std::string_view::npos ? "" : line.substr(space + 1);
      if (field.starts_with("Nodes=")) names = field.substr(6);
      if (field.starts_with("GRES=")) gpus += gpus_in_gres(field.substr(5));
    }
    nodes.emplace_back(std::move(names), gpus);
  }
  return nodes;
}

namespace {

// `free_on(i)`: node i's free {CPUs, GPUs}.
std::vector<int> place_by(const std::vector<SlurmNode>& nodes, int ranks, int cpus, int gpus,
                          PlacementStrategy strategy, const auto& free_on) {
  cpus = std::max(cpus, 1);
  // The ranks node i holds after `taken` of the group, then its free CPUs:
  // fuller nodes compare less.
  auto room = [&](int i, int taken = 0) {
    const auto [free_cpus, free_gpus] = free_on(i);
    const int fit = gpus > 0 ? std::min(free_cpus / cpus, free_gpus / gpus) : free_cpus / cpus;
    return std::pair(fit - taken, free_cpus - taken * cpus);
  };
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  if (strategy == PlacementStrategy::kSpread || strategy == PlacementStrategy::kStrictSpread) {
    // Rank by rank onto the node holding the fewest of the group's ranks
    // (the roomiest of those); STRICT: never two on one node.
    std::vector<int> taken(nodes.size(), 0);
    for (int r = 0; r < ranks; ++r) {
      int pick = -1;
      for (int i : order) {
        if (room(i, taken[i]).first <= 0) continue;
        if (strategy == PlacementStrategy::kStrictSpread && taken[i] > 0) continue;
        if (pick < 0 || taken[i] < taken[pick] ||
            (taken[i] == taken[pick] && room(i, taken[i]) > room(pick, taken[pick]))) {
          pick = i;
        }
      }
      if (pick < 0) return {};
      ++taken[pick];
    }
    std::vector<int> placed;
    for (int i : order) placed.insert(placed.end(), taken[i], i);
    return placed;
  }
  // One node if any holds the whole group: the fullest such (packing).
  int best = -1;
  for (int i : order) {
    if (room(i).first >= ranks && (best < 0 || room(i) < room(best))) best = i;
  }
  if (best >= 0) return std::vector<int>(ranks, best);
  if (strategy == PlacementStrategy::kStrictPack) return {};
  // Else the roomiest nodes first, as many ranks on each as fit.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return room(a) > room(b); });
  std::vector<int> placed;
  for (int i : order) {
    for (int fit = room(i).first; fit > 0 && static_cast<int>(placed.size()) < ranks; --fit) {
      placed.push_back(i);
    }
  }
  if (static_cast<int>(placed.size()) < ranks) return {};
  return placed;
}

}  // namespace

std::vector<int> place_ranks(const std::vector<SlurmNode>& nodes, int ranks, int cpus, int gpus,
                             PlacementStrategy strategy) {
  return place_by(nodes, ranks, cpus, gpus, strategy,
                  [&](int i) { return std::pair(nodes[i].free_cpus(), nodes[i].free_gpus()); });
}

bool could_ever_place(const std::vector<SlurmNode>& nodes, int ranks, int cpus, int gpus,
                      PlacementStrategy strategy) {
  return !place_by(nodes, ranks, cpus, gpus, strategy, [&](int i) {
            return nodes[i].health == NodeHealth::kRetired
                       ? std::pair(0, 0)
                       : std::pair(nodes[i].cpus, nodes[i].gpus);
          }).empty();
}

bool slurm_state_usable(std::string_view state) {
  if (state.ends_with('*')) return false;  // not responding
  for (std::string_view bad : {"down", "drain", "drng", "fail", "failg", "maint", "unk", "futr",
                               "npc", "pow", "boot", "inval"}) {
    if (state.starts_with(bad)) return false;
  }
  return true;
}

bool slurm_state_failed(std::string_view state) {
  return state.ends_with('*') || state.starts_with("down") || state.starts_with("fail");
}

std::string suspect_node(SlurmNode& node) {
  if (node.health == NodeHealth::kUsable) node.health = NodeHealth::kSuspected;
  return {};
}

std::string probe_passed(SlurmNode& node) {
  if (node.health != NodeHealth::kSuspected) return {};
  node.down_since_failure = false;
  node.health = NodeHealth::kUsable;
  if (node.failures == 0) return {};
  return fmt::format("node {} is back: a probe step ran there", node.name);
}

std::string node_failed(SlurmNode& node, std::string_view why) {
  // Already counted: this is the same failure seen another way.
  if (node.health == NodeHealth::kRetired || node.health == NodeHealth::kDown) return {};
  node.failure = why;
  if (node.down_since_failure) {  // never back since: still down
    node.health = NodeHealth::kDown;
    return {};
  }
  node.down_since_failure = true;
  node.unstarted_steps = 0;
  if (++node.failures >= node.retire_after && node.retire_after > 0) {
    node.health = NodeHealth::kRetired;
    return fmt::format(
        "node {} failed {} ({}); it is not used again in this allocation", node.name,
        node.failures == 2 ? std::string("twice") : fmt::format("{} times", node.failures), why);
  }
  node.health = NodeHealth::kDown;
  return fmt::format("node {} failed ({}); no trial is placed there until Slurm reports it up",
                     node.name, why);
}

std::string apply_slurm_state(SlurmNode& node, std::string_view state) {
  const bool down = !slurm_state_usable(state);
  const bool was_down = std::exchange(node.slurm_down, down);
  const bool step_ended = std::exchange(node.step_ended, false);
  if (slurm_state_failed(state) && (node.health == NodeHealth::kSuspected ||
                                    (step_ended && node.health == NodeHealth::kUsable))) {
    return node_failed(node, fmt::format("Slurm reports it {}", state));
  }
  if (!down && node.health == NodeHealth::kDown) {
    node.health = NodeHealth::kSuspected;  // probed before a trial goes there
    return {};
  }
  if (down && !was_down && node.health == NodeHealth::kUsable) {
    return fmt::format("node {} is {} in Slurm; no trial is placed there while it is", node.name,
                       state);
  }
  return {};
}

std::string node_left(SlurmNode& node, std::string_view job_id) {
  if (node.health == NodeHealth::kRetired) return {};
  node.health = NodeHealth::kRetired;
  node.failures = std::max(node.failures, 1);
  node.failure = fmt::format("Slurm took it out of allocation {}", job_id);
  return fmt::format(
      "node {} is no longer in allocation {} (Slurm took it out when it failed); it is not used "
      "again in this run",
      node.name, job_id);
}

std::string step_not_started(SlurmNode& node, std::string_view why) {
  // Down or retired: this step's end is that failure, already counted.
  if (node.health == NodeHealth::kDown || node.health == NodeHealth::kRetired) return {};
  if (++node.unstarted_steps < kUnstartedStepsFailed) return {};
  node.unstarted_steps = 0;
  return node_failed(node, fmt::format("{} steps in a row there never started, though probe "
                                       "steps run there; the last: {}",
                                       kUnstartedStepsFailed, why));
}

void step_started(SlurmNode& node) { node.unstarted_steps = 0; }

void restore_node(SlurmNode& node, int failures, bool same_allocation) {
  if (failures <= node.failures) return;
  node.failures = failures;
  if (failures >= 2 && same_allocation) {
    node.health = NodeHealth::kRetired;
  } else if (node.health == NodeHealth::kUsable) {
    node.health = NodeHealth::kSuspected;
  }
}

namespace {

// The word after `marker` in `line` (a node name ends at a space, ':' or ','); empty without one.
std::string word_after(std::string_view line, std::string_view marker) {
  const size_t at = line.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + marker.size());
  return std::string(rest.substr(0, std::min(rest.find_first_of(" :,\t"), rest.size())));
}

}  // namespace

SrunReport read_srun_output(std::string_view text, const std::vector<std::string>& step_nodes) {
  SrunReport report;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? "" : text.substr(newline + 1);
    if (!line.starts_with("srun: ")) continue;
    std::string node = word_after(line, "Node failure on ");
    if (node.empty() && line.find("Task launch for ") != std::string_view::npos) {
      node = word_after(line, " failed on node ");
    }
    std::string index = word_after(line, "missing step on node ");
    if (index.empty()) index = word_after(line, "Cannot communicate with node ");
    if (!index.empty()) {
      size_t k = 0;
      auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), k);
      if (ec == std::errc() && k < step_nodes.size()) node = step_nodes[k];
    }
    if (!node.empty()) {
      const bool named = std::any_of(report.failed_nodes.begin(), report.failed_nodes.end(),
                                     [&](const auto& failed) { return failed.first == node; });
      if (!named) report.failed_nodes.emplace_back(node, std::string(line));
    }
    if (line.find("step creation temporarily disabled") != std::string_view::npos ||
        line.find("step creation still disabled") != std::string_view::npos) {
      report.step_pending = true;
      if (report.pending_line.empty()) report.pending_line = line;
    }
    if (line.find("Step created for ") != std::string_view::npos) report.step_created = true;
  }
  if (report.step_created) report.step_pending = false;
  return report;
}

std::string parse_job_nodelist(std::string_view scontrol_job) {
  for (size_t at = scontrol_job.find("NodeList="); at != std::string_view::npos;
       at = scontrol_job.find("NodeList=", at + 1)) {
    // Not ReqNodeList= or ExcNodeList=.
    if (at > 0 && scontrol_job[at - 1] != ' ' && scontrol_job[at - 1] != '\n') continue;
    std::string_view rest = scontrol_job.substr(at + 9);
    std::string list(rest.substr(0, std::min(rest.find_first_of(" \n"), rest.size())));
    return list == "(null)" ? "" : list;
  }
  return {};
}

}  // namespace tune
