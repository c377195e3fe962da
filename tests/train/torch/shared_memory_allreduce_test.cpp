#include "train/torch/shared_memory_allreduce.h"

#include <doctest/doctest.h>

#include <atomic>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "train/torch/process_group.h"

namespace {

using train::detail::SharedMemoryAllreduce;

std::string unique_name() {
  static std::atomic<int> next{0};
  return "/tunerun-test-" + std::to_string(::getpid()) + "-" + std::to_string(next++);
}

// Opens the segment on `world_size` threads (rank 0 first), then runs
// fn(rank, segment) on each and rethrows the first exception.
template <typename Fn>
void run_ranks(int world_size, int64_t numel, Fn fn) {
  const std::string name = unique_name();
  std::vector<std::unique_ptr<SharedMemoryAllreduce>> segments;
  for (int rank = 0; rank < world_size; ++rank) {
    segments.push_back(SharedMemoryAllreduce::open(name, rank, world_size, numel));
    REQUIRE(segments.back() != nullptr);
  }
  segments[0]->unlink();
  std::vector<std::exception_ptr> errors(world_size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        fn(rank, *segments[rank]);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace

TEST_CASE("shared-memory allreduce leaves the mean in every rank's slot") {
  constexpr int kWorld = 3;
  constexpr int64_t kNumel = 5000;  // not a multiple of the block or the world size
  std::vector<std::vector<float>> results(kWorld);
  run_ranks(kWorld, kNumel, [&](int rank, SharedMemoryAllreduce& segment) {
    for (int round = 0; round < 3; ++round) {
      float* slot = segment.slot();
      for (int64_t i = 0; i < kNumel; ++i) slot[i] = static_cast<float>(3 * (rank + round) + i);
      segment.allreduce_mean(std::chrono::seconds(20));
      results[rank].assign(slot, slot + kNumel);
    }
  });
  // Last round (2): mean over ranks of 3 * (rank + 2) + i = 3 * (1 + 2) + i.
  for (int64_t i = 0; i < kNumel; i += 997) CHECK(results[0][i] == doctest::Approx(9.0 + i));
  CHECK(results[0] == results[1]);
  CHECK(results[0] == results[2]);
}

TEST_CASE("a shared-memory segment another host cannot see is not opened") {
  CHECK(SharedMemoryAllreduce::open(unique_name(), 1, 2, 16) == nullptr);
}

TEST_CASE("a rank whose peer never arrives fails with ProcessGroupError") {
  run_ranks(2, 16, [&](int rank, SharedMemoryAllreduce& segment) {
    if (rank == 0) {
      CHECK_THROWS_AS(segment.allreduce_mean(std::chrono::milliseconds(50)),
                      train::ProcessGroupError);
    }
  });
}

TEST_CASE("reduce_to_first sums into rank 0's slot and broadcast_first copies it to every slot") {
  constexpr int kWorld = 3;
  constexpr int64_t kNumel = 3000;
  std::vector<std::vector<float>> reduced(kWorld), broadcast(kWorld);
  run_ranks(kWorld, kNumel, [&](int rank, SharedMemoryAllreduce& segment) {
    for (int round = 0; round < 2; ++round) {
      float* slot = segment.slot();
      for (int64_t i = 0; i < kNumel; ++i) slot[i] = static_cast<float>(rank + round + i);
      segment.reduce_to_first(0.5f, std::chrono::seconds(20));
      reduced[rank].assign(slot, slot + kNumel);
      if (rank == 0) {
        for (int64_t i = 0; i < kNumel; ++i) slot[i] += 1.0f;  // the cross-host step's stand-in
      }
      segment.broadcast_first(std::chrono::seconds(20));
      broadcast[rank].assign(slot, slot + kNumel);
    }
  });
  // Round 1: 0.5 * sum over ranks of (rank + 1 + i) = 0.5 * (6 + 3i); the others keep theirs.
  for (int64_t i = 0; i < kNumel; i += 331) {
    CHECK(reduced[0][i] == doctest::Approx(0.5 * (6 + 3 * i)));
    CHECK(reduced[2][i] == static_cast<float>(2 + 1 + i));
    CHECK(broadcast[0][i] == doctest::Approx(0.5 * (6 + 3 * i) + 1));
  }
  CHECK(broadcast[1] == broadcast[0]);
  CHECK(broadcast[2] == broadcast[0]);
}
