// Gradient averaging for ranks on one host through one shared-memory segment:
// the transport the reducer (ddp.cpp) prefers to the process group's backend
// when every rank can map the segment.
//
// Why: on a 2-core host, Gloo's TCP loopback allreduce of a 2 MB gradient
// costs 4-7 ms per step (two kernel copies per byte, a transport thread per
// process and scheduler wake-ups), more than the step's compute. Here each
// rank's gradient bucket lives in the segment itself (the parameters' grads
// are views into it), so averaging is two barriers and one pass over memory:
// rank r sums chunk r of every rank's slot and writes the mean back into
// every slot. Every rank ends with the same bits.
//
// Layout: one 4 KiB header page (the barrier counter), then `world_size`
// slots of `numel` floats, each starting on a 4 KiB boundary.
//
// Thread safety: one thread per rank calls allreduce_mean(), all ranks the
// same number of times. Ranks may be processes or threads of one process.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace train::detail {

class SharedMemoryAllreduce {
 public:
  // Rank 0 creates the segment named `name` (a POSIX shm name, "/..."),
  // sized for `world_size` slots of `numel` floats; the other ranks open it,
  // so rank 0 must have returned first. Returns nullptr when the segment
  // cannot be created, opened or mapped (e.g. a rank on another host): the
  // caller then uses the process group instead.
  static std::unique_ptr<SharedMemoryAllreduce> open(const std::string& name, int rank,
                                                     int world_size, int64_t numel);
  ~SharedMemoryAllreduce();
  SharedMemoryAllreduce(const SharedMemoryAllreduce&) = delete;
  SharedMemoryAllreduce& operator=(const SharedMemoryAllreduce&) = delete;

  // Removes the segment's name; the mappings stay valid. Rank 0 calls it once
  // every rank has opened the segment, so that nothing is left in /dev/shm
  // even when a rank dies later.
  void unlink();

  // This rank's slot: `numel` floats, zeroed when the segment is created.
  float* slot() const;
  int64_t numel() const { return numel_; }

  // Replaces every rank's slot with the element-wise mean over all slots.
  // A collective: returns when every rank's slot holds the mean. Throws
  // ProcessGroupError when the other ranks do not arrive within `timeout`.
  void allreduce_mean(std::chrono::milliseconds timeout);

  // The two halves of an average over several hosts, with the cross-host
  // step between them on rank 0 (the host's leader):
  // reduce_to_first() sets rank 0's slot to `scale` times the element-wise
  // sum over all slots (the others keep theirs) and returns when it is
  // complete; broadcast_first() copies rank 0's slot into every other slot.
  // Both are collectives with the contract of allreduce_mean.
  void reduce_to_first(float scale, std::chrono::milliseconds timeout);
  void broadcast_first(std::chrono::milliseconds timeout);

 private:
  SharedMemoryAllreduce(std::string name, int rank, int world_size, int64_t numel, void* base,
                        size_t bytes);
  // Waits until every rank has called barrier() as often as this one.
  void barrier(std::chrono::milliseconds timeout);
  float* slot_of(int rank) const;
  // Every rank sums its share of the elements (whole blocks, so no two ranks
  // write one cache line) over all slots, times `scale`, into the first
  // `written` slots.
  void combine(float scale, int written, std::chrono::milliseconds timeout);
  // This rank's share of the elements: [first, second).
  std::pair<int64_t, int64_t> share() const;

  std::string name_;
  int rank_;
  int world_size_;
  int64_t numel_;
  void* base_;
  size_t bytes_;
  uint32_t barriers_ = 0;  // barriers this rank has passed (wraps, as the shared counter does)
};

}  // namespace train::detail
