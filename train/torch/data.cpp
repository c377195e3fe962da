#include "train/torch/data.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/errors.h"
#include "train/torch/process_group.h"

namespace train {

DistributedSampler::DistributedSampler(int64_t dataset_size, const SamplerOptions& options)
    : dataset_size_(dataset_size), options_(options) {
  auto [rank, world] = detail::rank_and_world_size();
  rank_ = options.rank >= 0 ? options.rank : rank;
  num_replicas_ = options.num_replicas > 0 ? options.num_replicas : world;
  if (dataset_size <= 0) throw tune::ConfigError("DistributedSampler: the dataset is empty");
  if (rank_ >= num_replicas_) {
    throw tune::ConfigError("DistributedSampler: rank " + std::to_string(rank_) +
                            " out of range for " + std::to_string(num_replicas_) + " replicas");
  }
  num_samples_ = options.drop_last ? dataset_size / num_replicas_
                                   : (dataset_size + num_replicas_ - 1) / num_replicas_;
  if (num_samples_ == 0) {
    throw tune::ConfigError("DistributedSampler: " + std::to_string(dataset_size) +
                            " samples cannot be split over " + std::to_string(num_replicas_) +
                            " ranks with drop_last");
  }
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> all(dataset_size_);
  if (options_.shuffle) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(options_.seed + epoch_);
    at::Tensor perm = at::randperm(dataset_size_, generator, at::kLong);
    std::copy_n(perm.data_ptr<int64_t>(), dataset_size_, all.begin());
  } else {
    for (int64_t i = 0; i < dataset_size_; ++i) all[i] = i;
  }
  const int64_t total = num_samples_ * num_replicas_;
  all.reserve(total);
  for (int64_t i = 0; static_cast<int64_t>(all.size()) < total; ++i) all.push_back(all[i]);
  std::vector<int64_t> mine;
  mine.reserve(num_samples_);
  for (int64_t i = rank_; i < total; i += num_replicas_) mine.push_back(all[i]);
  return mine;
}

DistributedDataLoader::DistributedDataLoader(TensorDataset dataset, int64_t batch_size,
                                             const LoaderOptions& options)
    : dataset_(std::move(dataset)),
      batch_size_(batch_size),
      options_(options),
      sampler_(dataset_.size(), options.sampler) {
  if (batch_size < 1) throw tune::ConfigError("prepare_data_loader: batch_size must be >= 1");
  if (dataset_.target.defined() && dataset_.target.size(0) != dataset_.size()) {
    throw tune::ConfigError("prepare_data_loader: data and target differ in length");
  }
  set_epoch(0);
}

void DistributedDataLoader::set_epoch(int64_t epoch) {
  sampler_.set_epoch(epoch);
  std::vector<int64_t> indices = sampler_.indices();
  indices_ = at::tensor(indices, at::kLong);
}

int64_t DistributedDataLoader::num_batches() const {
  int64_t n = sampler_.num_samples();
  return options_.drop_last_batch ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

Batch DistributedDataLoader::Iterator::operator*() const {
  const auto& l = *loader_;
  int64_t start = batch_ * l.batch_size_;
  int64_t length = std::min(l.batch_size_, l.indices_.size(0) - start);
  at::Tensor index = l.indices_.narrow(0, start, length);
  Batch batch;
  batch.data = l.dataset_.data.index_select(0, index);
  if (l.dataset_.target.defined()) batch.target = l.dataset_.target.index_select(0, index);
  return batch;
}

DistributedDataLoader prepare_data_loader(TensorDataset dataset, int64_t batch_size,
                                          const LoaderOptions& options) {
  return DistributedDataLoader(std::move(dataset), batch_size, options);
}

}  // namespace train
