// Gradient averaging for ranks that may span hosts, as NCCL and Horovod do
// it: ranks on one host average through one shared-memory segment
// (shared_memory_allreduce.h); when the group spans hosts, each host's first
// rank (its leader) sums its host's slots, the leaders allreduce the sums
// through a process group of their own (Gloo over TCP), and every rank of a
// host takes the result from its leader's slot. Only one rank per host
// crosses the network, so each host sends its gradient once however many
// ranks it runs, and a flat Gloo ring's extra hops between hosts are gone.
//
// Thread safety: as SharedMemoryAllreduce: one thread per rank, every rank
// calls allreduce_mean() the same number of times.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "train/torch/shared_memory_allreduce.h"

namespace train::detail {

// Which host every rank of a group runs on.
struct HostLayout {
  std::vector<int> host_of_rank;  // hosts numbered in order of their first rank
  std::vector<int> leaders;       // each host's first rank, by host
  int num_hosts() const { return static_cast<int>(leaders.size()); }
  // Ranks on the host of `rank`, and `rank`'s place among them.
  int local_world_size(int rank) const;
  int local_rank(int rank) const;
};

// A collective over `group`: every rank names its host (ranks with equal
// names are on one host) and learns everyone's. Throws ProcessGroupError.
HostLayout exchange_host_layout(c10d::ProcessGroup& group, const std::string& host);

// This host's name (gethostname), what DdpOptions::host defaults to.
std::string this_host();

class HierarchicalAllreduce {
 public:
  // A collective over `group` (made by new_process_group or
  // init_process_group: the leaders' group is made from its store). Each
  // host's leader creates a segment for its host's ranks, sized for `numel`
  // floats per rank, and the others map it. Returns nullptr, on every rank
  // alike, when some rank could not map its host's segment (the caller then
  // averages through `group`'s backend). Throws ProcessGroupError.
  static std::unique_ptr<HierarchicalAllreduce> open(
      const c10::intrusive_ptr<c10d::ProcessGroup>& group, const HostLayout& layout, int64_t numel);

  // This rank's slot in its host's segment: `numel` floats, zeroed. Shared, so
  // that gradients viewing it can keep it mapped after this object is gone.
  const std::shared_ptr<SharedMemoryAllreduce>& segment() const { return local_; }

  // Replaces every rank's slot with the mean over all ranks of the group.
  // Throws ProcessGroupError when a peer does not arrive within `timeout`
  // (the leaders' allreduce: within the group's own timeout).
  void allreduce_mean(std::chrono::milliseconds timeout);

 private:
  HierarchicalAllreduce(std::shared_ptr<SharedMemoryAllreduce> local,
                        c10::intrusive_ptr<c10d::ProcessGroup> leaders, int world_size,
                        bool spans_hosts);

  std::shared_ptr<SharedMemoryAllreduce> local_;
  // Across hosts, on each host's leader; nullptr on the other ranks and when
  // every rank is on one host.
  c10::intrusive_ptr<c10d::ProcessGroup> leaders_;
  bool spans_hosts_;  // every rank takes part in the leaders' step
  float scale_;       // 1 / world size
};

}  // namespace train::detail
