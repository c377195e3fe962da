#include "train/torch/shared_memory_allreduce.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <ctime>

#include "train/torch/process_group.h"

namespace train::detail {

namespace {

constexpr size_t kPage = 4096;
// Spins before sleeping in the kernel: long enough to cover a peer that is
// running and a few microseconds behind, short enough not to steal a core
// from a peer that is not running.
constexpr int kSpins = 4000;
// Elements summed at a time: a block of every slot stays in L1, and the
// fixed trip count lets the compiler vectorise at -O2.
constexpr int64_t kBlock = 1024;

size_t slot_bytes(int64_t numel) {
  size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  return (bytes + kPage - 1) / kPage * kPage;
}

std::atomic_ref<uint32_t> counter(void* base) {
  return std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(base));
}

// Not FUTEX_PRIVATE: the word is shared between processes.
void futex_wait(uint32_t* word, uint32_t expected, const timespec* timeout) {
  syscall(SYS_futex, word, FUTEX_WAIT, expected, timeout, nullptr, 0);
}

void futex_wake_all(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// (sum over slots of slot[j]) * scale into slot[j] of the first `written` slots.
template <int64_t kCount>
void sum_block(float* const* slots, int world_size, int written, int64_t offset, float scale) {
  float acc[kCount];
  const float* first = slots[0] + offset;
  for (int64_t j = 0; j < kCount; ++j) acc[j] = first[j];
  for (int k = 1; k < world_size; ++k) {
    const float* s = slots[k] + offset;
    for (int64_t j = 0; j < kCount; ++j) acc[j] += s[j];
  }
  for (int64_t j = 0; j < kCount; ++j) acc[j] *= scale;
  for (int k = 0; k < written; ++k) {
    float* s = slots[k] + offset;
    for (int64_t j = 0; j < kCount; ++j) s[j] = acc[j];
  }
}

}  // namespace

std::unique_ptr<SharedMemoryAllreduce> SharedMemoryAllreduce::open(const std::string& name,
                                                                   int rank, int world_size,
                                                                   int64_t numel) {
  const size_t bytes = kPage + static_cast<size_t>(world_size) * slot_bytes(numel);
  int fd = rank == 0 ? shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600)
                     : shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  struct stat st {};
  bool sized = rank == 0 ? ftruncate(fd, static_cast<off_t>(bytes)) == 0
                         : fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes;
  void* base = sized ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (base == MAP_FAILED) {
    if (rank == 0) shm_unlink(name.c_str());
    return nullptr;
  }
  return std::unique_ptr<SharedMemoryAllreduce>(
      new SharedMemoryAllreduce(name, rank, world_size, numel, base, bytes));
}

SharedMemoryAllreduce::SharedMemoryAllreduce(std::string name, int rank, int world_size,
                                             int64_t numel, void* base, size_t bytes)
    : name_(std::move(name)),
      rank_(rank),
      world_size_(world_size),
      numel_(numel),
      base_(base),
      bytes_(bytes) {}

SharedMemoryAllreduce::~SharedMemoryAllreduce() {
  munmap(base_, bytes_);
  if (rank_ == 0) unlink();
}

void SharedMemoryAllreduce::unlink() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  name_.clear();
}

float* SharedMemoryAllreduce::slot() const { return slot_of(rank_); }

float* SharedMemoryAllreduce::slot_of(int rank) const {
  return reinterpret_cast<float*>(static_cast<char*>(base_) + kPage +
                                  static_cast<size_t>(rank) * slot_bytes(numel_));
}

void SharedMemoryAllreduce::barrier(std::chrono::milliseconds timeout) {
  // One counter for every barrier: the k-th completes when it reaches
  // k * world_size. Unsigned arithmetic wraps on every rank alike.
  auto count = counter(base_);
  const uint32_t target = (barriers_ + 1) * static_cast<uint32_t>(world_size_);
  ++barriers_;
  uint32_t seen = count.fetch_add(1, std::memory_order_acq_rel) + 1;
  auto done = [&](uint32_t value) { return static_cast<int32_t>(value - target) >= 0; };
  if (seen == target) {
    futex_wake_all(static_cast<uint32_t*>(base_));
    return;
  }
  for (int i = 0; i < kSpins; ++i) {
    if (done(count.load(std::memory_order_acquire))) return;
    cpu_relax();
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(seen = count.load(std::memory_order_acquire))) {
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) {
      throw ProcessGroupError("shared-memory allreduce: rank " + std::to_string(rank_) +
                              " waited " + std::to_string(timeout.count()) +
                              " ms for the other ranks");
    }
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::min<std::chrono::steady_clock::duration>(left, std::chrono::seconds(1)))
                  .count();
    timespec wait{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    futex_wait(static_cast<uint32_t*>(base_), seen, &wait);
  }
}

std::pair<int64_t, int64_t> SharedMemoryAllreduce::share() const {
  const int64_t blocks = (numel_ + kBlock - 1) / kBlock;
  const int64_t per_rank = (blocks + world_size_ - 1) / world_size_;
  const int64_t lo = std::min(numel_, rank_ * per_rank * kBlock);
  return {lo, std::min(numel_, lo + per_rank * kBlock)};
}

void SharedMemoryAllreduce::combine(float scale, int written, std::chrono::milliseconds timeout) {
  barrier(timeout);  // every rank's slot holds its gradients
  float* slots[64];
  float** all = slots;
  std::unique_ptr<float*[]> many;
  if (world_size_ > 64) {
    many.reset(new float*[world_size_]);
    all = many.get();
  }
  for (int k = 0; k < world_size_; ++k) all[k] = slot_of(k);
  const auto [lo, hi] = share();
  int64_t i = lo;
  for (; i + kBlock <= hi; i += kBlock) sum_block<kBlock>(all, world_size_, written, i, scale);
  for (; i < hi; ++i) sum_block<1>(all, world_size_, written, i, scale);
  barrier(timeout);  // every share written: no rank reads another's slot until the next call
}

void SharedMemoryAllreduce::allreduce_mean(std::chrono::milliseconds timeout) {
  combine(1.0f / static_cast<float>(world_size_), world_size_, timeout);
}

void SharedMemoryAllreduce::reduce_to_first(float scale, std::chrono::milliseconds timeout) {
  combine(scale, 1, timeout);
}

void SharedMemoryAllreduce::broadcast_first(std::chrono::milliseconds timeout) {
  barrier(timeout);  // rank 0's slot is final
  const auto [lo, hi] = share();
  if (hi > lo) {
    const float* first = slot_of(0) + lo;
    for (int k = 1; k < world_size_; ++k) {
      std::copy(first, first + (hi - lo), slot_of(k) + lo);
    }
  }
  barrier(timeout);  // rank 0 may write its slot again (the next backward)
}

}  // namespace train::detail
