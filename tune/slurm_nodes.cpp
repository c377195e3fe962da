#include "tune/slurm_nodes.h"

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

int SlurmAllocation::find(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
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

std::vector<int> place_by(const std::vector<SlurmNode>& nodes, int ranks, int cpus,
                          const auto& free_on) {
  cpus = std::max(cpus, 1);
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  // One node if any holds the whole group: the fullest such (packing).
  int best = -1;
  for (int i : order) {
    if (free_on(i) >= ranks * cpus && (best < 0 || free_on(i) < free_on(best))) best = i;
  }
  if (best >= 0) return std::vector<int>(ranks, best);
  // Else the freest nodes first, as many ranks on each as fit.
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return free_on(a) > free_on(b); });
  std::vector<int> placed;
  for (int i : order) {
    for (int fit = free_on(i) / cpus; fit > 0 && static_cast<int>(placed.size()) < ranks; --fit) {
      placed.push_back(i);
    }
  }
  if (static_cast<int>(placed.size()) < ranks) return {};
  return placed;
}

}  // namespace

std::vector<int> place_ranks(const std::vector<SlurmNode>& nodes, int ranks, int cpus) {
  return place_by(nodes, ranks, cpus, [&](int i) { return nodes[i].free_cpus(); });
}

bool could_ever_place(const std::vector<SlurmNode>& nodes, int ranks, int cpus) {
  return !place_by(nodes, ranks, cpus, [&](int i) {
            return nodes[i].health == NodeHealth::kRetired ? 0 : nodes[i].cpus;
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
  node.health = NodeHealth::kUsable;
  if (node.failures == 0) return {};
  return fmt::format("node {} is back: a probe step ran there", node.name);
}

std::string node_failed(SlurmNode& node, std::string_view why) {
  if (node.health == NodeHealth::kRetired) return {};
  if (++node.failures >= 2) {
    node.health = NodeHealth::kRetired;
    return fmt::format("node {} failed twice ({}); it is not used again in this run", node.name,
                       why);
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

}  // namespace tune
