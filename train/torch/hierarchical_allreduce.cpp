#include "train/torch/hierarchical_allreduce.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "train/torch/process_group.h"

namespace train::detail {

namespace {

// Host names travel as fixed-size byte rows (HOST_NAME_MAX is 64 on Linux).
constexpr int64_t kHostBytes = 256;

void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw ProcessGroupError(std::string(what) + " failed: " + e.what());
  }
}

std::string segment_name(int64_t pid, int64_t nonce) {
  char text[64];
  std::snprintf(text, sizeof text, "/tunerun-ddp-%lld-%llx", static_cast<long long>(pid),
                static_cast<unsigned long long>(nonce));
  return text;
}

}  // namespace

int HostLayout::local_world_size(int rank) const {
  return static_cast<int>(
      std::count(host_of_rank.begin(), host_of_rank.end(), host_of_rank.at(rank)));
}

int HostLayout::local_rank(int rank) const {
  return static_cast<int>(
      std::count(host_of_rank.begin(), host_of_rank.begin() + rank, host_of_rank.at(rank)));
}

std::string this_host() {
  char name[kHostBytes] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

HostLayout exchange_host_layout(c10d::ProcessGroup& group, const std::string& host) {
  const int world_size = group.getSize();
  std::vector<at::Tensor> mine{at::zeros({kHostBytes}, at::kByte)};
  std::copy_n(host.data(), std::min<size_t>(host.size(), kHostBytes - 1),
              reinterpret_cast<char*>(mine[0].data_ptr<uint8_t>()));
  std::vector<std::vector<at::Tensor>> all(1);
  for (int r = 0; r < world_size; ++r) all[0].push_back(at::empty({kHostBytes}, at::kByte));
  wait(group.allgather(all, mine), "exchanging host names");
  HostLayout layout;
  std::vector<std::string> names;  // by host index
  for (int r = 0; r < world_size; ++r) {
    std::string name(reinterpret_cast<const char*>(all[0][r].data_ptr<uint8_t>()));
    auto known = std::find(names.begin(), names.end(), name);
    if (known == names.end()) {
      layout.leaders.push_back(r);
      names.push_back(name);
      known = names.end() - 1;
    }
    layout.host_of_rank.push_back(static_cast<int>(known - names.begin()));
  }
  return layout;
}

std::unique_ptr<HierarchicalAllreduce> HierarchicalAllreduce::open(
    const c10::intrusive_ptr<c10d::ProcessGroup>& group, const HostLayout& layout, int64_t numel) {
  const int rank = group->getRank();
  const int world_size = group->getSize();
  const int leader = layout.leaders.at(layout.host_of_rank.at(rank));
  // Row r: the segment name's parts (pid, nonce) when rank r is a leader
  // that created one; zeros otherwise. One sum delivers every host's name.
  std::vector<at::Tensor> names{at::zeros({world_size, 2}, at::kLong)};
  int64_t* parts = names[0].data_ptr<int64_t>();
  std::unique_ptr<SharedMemoryAllreduce> mapped;
  const int local_rank = layout.local_rank(rank);
  const int local_size = layout.local_world_size(rank);
  if (rank == leader) {
    std::random_device entropy;
    const int64_t pid = getpid();
    const auto nonce = static_cast<int64_t>(uint64_t{entropy()} << 32 | entropy());
    mapped = SharedMemoryAllreduce::open(segment_name(pid, nonce), 0, local_size, numel);
    if (mapped) {
      parts[2 * rank] = pid;
      parts[2 * rank + 1] = nonce;
    }
  }
  wait(group->allreduce(names), "sharing the shared-memory names");
  if (rank != leader && parts[2 * leader] != 0) {
    mapped = SharedMemoryAllreduce::open(segment_name(parts[2 * leader], parts[2 * leader + 1]),
                                         local_rank, local_size, numel);
  }
  // Across hosts the leaders need a group of their own, made from `group`'s store.
  const bool spans_hosts = layout.num_hosts() > 1;
  std::vector<at::Tensor> ok{
      at::full({1}, mapped && (!spans_hosts || has_store(group)) ? 1 : 0, at::kInt)};
  wait(group->allreduce(ok, c10d::AllreduceOptions{.reduceOp = c10d::ReduceOp::MIN}),
       "agreeing on shared memory");
  if (rank == leader && mapped) mapped->unlink();  // every rank that could map it has
  if (ok[0].item<int>() == 0) return nullptr;
  c10::intrusive_ptr<c10d::ProcessGroup> leaders;
  if (spans_hosts) leaders = new_group(group, layout.leaders);
  return std::unique_ptr<HierarchicalAllreduce>(
      new HierarchicalAllreduce(std::move(mapped), std::move(leaders), world_size, spans_hosts));
}

HierarchicalAllreduce::HierarchicalAllreduce(std::shared_ptr<SharedMemoryAllreduce> local,
                                             c10::intrusive_ptr<c10d::ProcessGroup> leaders,
                                             int world_size, bool spans_hosts)
    : local_(std::move(local)),
      leaders_(std::move(leaders)),
      spans_hosts_(spans_hosts),
      scale_(1.0f / static_cast<float>(world_size)) {}

void HierarchicalAllreduce::allreduce_mean(std::chrono::milliseconds timeout) {
  if (!spans_hosts_) {
    local_->allreduce_mean(timeout);
    return;
  }
  // Each leader's slot: its host's sum / world size; their sum is the mean.
  local_->reduce_to_first(scale_, timeout);
  if (leaders_) {
    std::vector<at::Tensor> slot{
        at::from_blob(local_->slot(), {local_->numel()}, at::TensorOptions(at::kFloat))};
    wait(leaders_->allreduce(slot), "allreduce across hosts");
  }
  local_->broadcast_first(timeout);
}

}  // namespace train::detail
