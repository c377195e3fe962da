// Sharding data over ranks: train::prepare_data_loader and the sampler under
// it, as PyTorch's DistributedSampler and Ray Train's prepare_data_loader.
//
//   train::TensorDataset data{images, labels};
//   auto loader = train::prepare_data_loader(data, 128);  // this rank's shard
//   for (int64_t epoch = 0; epoch < n; ++epoch) {
//     loader.set_epoch(epoch);                            // a new shuffle per epoch
//     for (const auto& batch : loader) step(batch.data, batch.target);
//   }
//
// Every rank gets the same number of samples, so every rank runs the same
// number of steps (a DDP requirement): the tail of an uneven dataset is
// dropped (drop_last) or padded by repeating the first samples of the epoch.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace train {

struct SamplerOptions {
  // This rank and the number of ranks. -1: the default process group's, or
  // RANK / WORLD_SIZE from the environment, or 0 of 1.
  int64_t rank = -1;
  int64_t num_replicas = -1;
  // Shuffle the whole dataset each epoch before sharding; the permutation
  // depends only on seed + epoch, so every rank computes the same one
  // (PyTorch's DistributedSampler: torch.randperm seeded with seed + epoch).
  bool shuffle = true;
  uint64_t seed = 0;
  // Uneven tail: true drops it, false (PyTorch's default) pads with
  // repeated samples so that every rank gets ceil(size / num_replicas).
  bool drop_last = false;
};

// Which dataset indices this rank visits in an epoch. Rank r takes positions
// r, r + R, r + 2R, ... of the (shuffled, trimmed or padded) index list, so
// the ranks' shards are disjoint except for padding.
class DistributedSampler {
 public:
  // Throws tune::ConfigError for an empty dataset or a rank out of range.
  DistributedSampler(int64_t dataset_size, const SamplerOptions& options = {});

  // Selects the epoch's permutation. Call before each epoch, on every rank.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // This rank's indices for the current epoch, num_samples() of them.
  std::vector<int64_t> indices() const;
  int64_t num_samples() const { return num_samples_; }
  int64_t rank() const { return rank_; }
  int64_t num_replicas() const { return num_replicas_; }

 private:
  int64_t dataset_size_;
  int64_t rank_;
  int64_t num_replicas_;
  int64_t num_samples_;
  SamplerOptions options_;
  int64_t epoch_ = 0;
};

// An in-memory dataset: sample i is (data[i], target[i]).
struct TensorDataset {
  at::Tensor data;
  at::Tensor target;
  int64_t size() const { return data.size(0); }
};

struct Batch {
  at::Tensor data;
  at::Tensor target;
};

struct LoaderOptions {
  SamplerOptions sampler;  // rank, shuffle, seed, tail handling
  // Drop a last batch smaller than batch_size (PyTorch DataLoader's
  // drop_last, default false). Ranks have equal shards, so equal batches.
  bool drop_last_batch = false;
};

// Batches of this rank's shard, gathered with index_select (one copy per
// batch, no worker threads: in-memory data is faster to gather than to
// hand between threads on a small machine).
class DistributedDataLoader {
 public:
  DistributedDataLoader(TensorDataset dataset, int64_t batch_size,
                        const LoaderOptions& options = {});

  void set_epoch(int64_t epoch);
  // Batches in this epoch on this rank.
  int64_t num_batches() const;
  const DistributedSampler& sampler() const { return sampler_; }

  class Iterator {
   public:
    Batch operator*() const;
    Iterator& operator++() {
      ++batch_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return batch_ != other.batch_; }

   private:
    friend class DistributedDataLoader;
    Iterator(const DistributedDataLoader* loader, int64_t batch) : loader_(loader), batch_(batch) {}
    const DistributedDataLoader* loader_;
    int64_t batch_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, num_batches()); }

 private:
  TensorDataset dataset_;
  int64_t batch_size_;
  LoaderOptions options_;
  DistributedSampler sampler_;
  at::Tensor indices_;  // this epoch's shard, as an int64 tensor
};

// A loader over this rank's shard of `dataset` (Ray Train's
// prepare_data_loader). Throws tune::ConfigError for batch_size < 1.
DistributedDataLoader prepare_data_loader(TensorDataset dataset, int64_t batch_size,
                                          const LoaderOptions& options = {});

}  // namespace train
