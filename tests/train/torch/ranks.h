// Ranks as threads over an in-memory c10d::HashStore, as Gloo's own tests do
// (gloo/test/base_test.h): multi-rank tests that are fast and hermetic.
#pragma once

#include <exception>
#include <functional>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

#include "train/torch/process_group.h"

namespace train::testing {

// Runs fn(rank, group) on `world_size` threads, each with its own Gloo
// process group, and rethrows the first exception a rank raised.
inline void run_ranks(
    int world_size,
    const std::function<void(int rank, c10::intrusive_ptr<c10d::ProcessGroup> group)>& fn) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::exception_ptr> errors(world_size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        ProcessGroupOptions options{.rendezvous_timeout = std::chrono::seconds(20),
                                    .timeout = std::chrono::seconds(20)};
        fn(rank, new_process_group(store, rank, world_size, options));
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

}  // namespace train::testing
