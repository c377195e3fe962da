#include "train/torch/data.h"

#include <doctest/doctest.h>
#include <torch/types.h>

#include <algorithm>
#include <map>

#include "core/errors.h"

namespace {

std::vector<std::vector<int64_t>> shards(int64_t size, int64_t replicas, int64_t epoch,
                                         train::SamplerOptions options = {}) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t r = 0; r < replicas; ++r) {
    options.rank = r;
    options.num_replicas = replicas;
    train::DistributedSampler sampler(size, options);
    sampler.set_epoch(epoch);
    out.push_back(sampler.indices());
    CHECK(static_cast<int64_t>(out.back().size()) == sampler.num_samples());
  }
  return out;
}

std::map<int64_t, int> counts(const std::vector<std::vector<int64_t>>& shards) {
  std::map<int64_t, int> seen;
  for (const auto& s : shards) {
    for (int64_t i : s) ++seen[i];
  }
  return seen;
}

}  // namespace

TEST_CASE("every sample is seen exactly once per epoch across ranks") {
  for (int64_t epoch : {0, 1, 5}) {
    auto s = shards(12, 3, epoch);
    auto seen = counts(s);
    CHECK(seen.size() == 12);
    for (auto [index, n] : seen) CHECK(n == 1);
    for (const auto& shard : s) CHECK(shard.size() == 4);
  }
}

TEST_CASE("set_epoch reshuffles deterministically and ranks agree") {
  auto a = shards(100, 2, 0);
  auto b = shards(100, 2, 1);
  CHECK(a != b);
  CHECK(shards(100, 2, 1) == b);
  CHECK(shards(100, 2, 1, {.seed = 9}) != b);
  // Without shuffling rank r takes r, r + R, ...
  auto plain = shards(6, 2, 3, {.shuffle = false});
  CHECK(plain[0] == std::vector<int64_t>{0, 2, 4});
  CHECK(plain[1] == std::vector<int64_t>{1, 3, 5});
}

TEST_CASE("an uneven tail is padded with repeated samples or dropped") {
  auto padded = shards(10, 3, 0);
  auto seen = counts(padded);
  CHECK(seen.size() == 10);  // all samples, two of them twice
  int repeats = 0;
  for (auto [index, n] : seen) repeats += n - 1;
  CHECK(repeats == 2);
  for (const auto& s : padded) CHECK(s.size() == 4);

  auto dropped = shards(10, 3, 0, {.drop_last = true});
  seen = counts(dropped);
  CHECK(seen.size() == 9);
  for (auto [index, n] : seen) CHECK(n == 1);
  for (const auto& s : dropped) CHECK(s.size() == 3);
}

TEST_CASE("a sampler rejects an empty dataset or a rank out of range") {
  CHECK_THROWS_AS(train::DistributedSampler(0), tune::ConfigError);
  CHECK_THROWS_AS(train::DistributedSampler(10, {.rank = 2, .num_replicas = 2}), tune::ConfigError);
  CHECK_THROWS_AS(train::DistributedSampler(1, {.rank = 0, .num_replicas = 2, .drop_last = true}),
                  tune::ConfigError);
}

TEST_CASE("the data loader batches this rank's shard") {
  auto x = torch::arange(10).to(torch::kFloat).unsqueeze(1);
  auto y = torch::arange(10);
  train::TensorDataset data{x, y};
  std::vector<int64_t> seen;
  for (int64_t rank = 0; rank < 2; ++rank) {
    train::LoaderOptions options{.sampler = {.rank = rank, .num_replicas = 2}};
    auto loader = train::prepare_data_loader(data, 2, options);
    loader.set_epoch(4);
    CHECK(loader.num_batches() == 3);  // 5 samples: 2 + 2 + 1
    auto expected = loader.sampler().indices();
    std::vector<int64_t> got;
    for (const auto& batch : loader) {
      CHECK(batch.data.size(0) <= 2);
      CHECK(torch::equal(batch.data.squeeze(1).to(torch::kLong), batch.target));
      for (int64_t i = 0; i < batch.target.size(0); ++i)
        got.push_back(batch.target[i].item<int64_t>());
    }
    CHECK(got == expected);
    seen.insert(seen.end(), got.begin(), got.end());
    options.drop_last_batch = true;
    CHECK(train::prepare_data_loader(data, 2, options).num_batches() == 2);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}
