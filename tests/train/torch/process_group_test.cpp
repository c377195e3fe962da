#include "train/torch/process_group.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "core/errors.h"
#include "ranks.h"
#include "train/torch/device.h"
#include "train/worker_env.h"

TEST_CASE("two ranks as threads allreduce over a Gloo group") {
  std::vector<float> sums(2);
  train::testing::run_ranks(2, [&](int rank, auto group) {
    std::vector<at::Tensor> t{at::full({4}, float(rank + 1))};
    group->allreduce(t)->wait();
    sums[rank] = t[0][3].item<float>();
  });
  CHECK(sums[0] == 3.0f);
  CHECK(sums[1] == 3.0f);
}

TEST_CASE("two ranks rendezvous through a TCPStore hosted by rank 0") {
  const int port = train::free_loopback_port();
  std::vector<float> sums(2);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(2);
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        c10d::TCPStoreOptions options;
        options.port = static_cast<uint16_t>(port);
        options.isServer = rank == 0;
        options.numWorkers = 2;
        options.waitWorkers = false;
        options.timeout = std::chrono::seconds(10);
        auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
        auto group = train::new_process_group(store, rank, 2);
        std::vector<at::Tensor> t{at::full({2}, float(rank + 1))};
        group->allreduce(t)->wait();
        sums[rank] = t[0][0].item<float>();
        train::barrier(group);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  CHECK(sums == std::vector<float>{3.0f, 3.0f});
}

TEST_CASE("new_group: a subgroup's collectives involve its members only") {
  std::vector<float> sums(3, -1.0f);
  std::vector<int> sizes(3, 0);
  train::testing::run_ranks(3, [&](int rank, auto group) {
    auto odd_one_out = train::new_group(group, {0, 2});
    auto everyone = train::new_group(group, {0, 1, 2});  // a second subgroup: its own keys
    CHECK((odd_one_out == nullptr) == (rank == 1));
    if (odd_one_out) {
      sizes[rank] = odd_one_out->getSize();
      std::vector<at::Tensor> t{at::full({2}, float(rank + 1))};
      odd_one_out->allreduce(t)->wait();
      sums[rank] = t[0][0].item<float>();
    }
    std::vector<at::Tensor> all{at::ones({1})};
    everyone->allreduce(all)->wait();
    CHECK(all[0].item<float>() == 3.0f);
  });
  CHECK(sums == std::vector<float>{4.0f, -1.0f, 4.0f});  // ranks 0 and 2: 1 + 3
  CHECK(sizes == std::vector<int>{2, 0, 2});
}

TEST_CASE("new_group refuses ranks that are not ascending or out of the group") {
  train::testing::run_ranks(2, [&](int, auto group) {
    CHECK_THROWS_WITH_AS(train::new_group(group, {1, 0}),
                         doctest::Contains("distinct, ascending and below 2"),
                         train::ProcessGroupError);
    CHECK_THROWS_AS(train::new_group(group, {0, 2}), train::ProcessGroupError);
    CHECK_THROWS_AS(train::new_group(group, {}), train::ProcessGroupError);
  });
}

TEST_CASE("a group whose peer never comes fails within the rendezvous timeout") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  train::ProcessGroupOptions options{.rendezvous_timeout = std::chrono::milliseconds(500)};
  CHECK_THROWS_AS(train::new_process_group(store, 0, 2, options), train::ProcessGroupError);
}

TEST_CASE("without WORLD_SIZE a single rank forms no group") {
  unsetenv("WORLD_SIZE");
  unsetenv("RANK");
  CHECK_FALSE(train::init_process_group());
  CHECK_FALSE(train::default_process_group());
  CHECK(train::detail::rank_and_world_size() == std::pair<int, int>{0, 1});
  train::destroy_process_group();
}

TEST_CASE("init_process_group names a missing MASTER_PORT") {
  setenv("WORLD_SIZE", "2", 1);
  setenv("RANK", "0", 1);
  unsetenv("MASTER_PORT");
  CHECK_THROWS_WITH_AS(train::init_process_group(), doctest::Contains("MASTER_PORT"),
                       train::ProcessGroupError);
  unsetenv("WORLD_SIZE");
  unsetenv("RANK");
}

#ifndef USE_C10D_NCCL
TEST_CASE("the nccl backend on a CPU-only libtorch fails clearly") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  train::ProcessGroupOptions options{.backend = train::Backend::kNccl};
  CHECK_THROWS_WITH_AS(train::new_process_group(store, 0, 1, options), doctest::Contains("nccl"),
                       train::ProcessGroupError);
}
#endif

namespace {

// Runs `body` with CUDA_VISIBLE_DEVICES set to `value` (nullptr: unset), then restores it.
template <class F>
void with_visible_devices(const char* value, F body) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  if (value) {
    setenv("CUDA_VISIBLE_DEVICES", value, 1);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
  body();
  if (old) {
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
}

}  // namespace

TEST_CASE("get_device: the CPU and Gloo unless the controller gave this rank a GPU") {
  with_visible_devices(nullptr, [] {
    CHECK(train::get_device() == c10::Device(c10::kCPU));
    CHECK(train::default_backend() == train::Backend::kGloo);
  });
  with_visible_devices("", [] { CHECK(train::get_device().is_cpu()); });
  with_visible_devices("-1", [] { CHECK(train::get_device().is_cpu()); });
  with_visible_devices("0", [] {
    if (torch::cuda::is_available()) {
      CHECK(train::get_device() == c10::Device(c10::kCUDA, 0));
      CHECK(train::default_backend() == train::Backend::kNccl);
    } else {
      // A CPU-only libtorch asked to use a GPU says so instead of training on the CPU.
      CHECK_THROWS_WITH_AS(train::get_device(), doctest::Contains("sees no CUDA device"),
                           tune::ConfigError);
    }
  });
}
