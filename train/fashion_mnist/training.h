// One rank's training loop pieces for the Fashion-MNIST trainables, kept
// apart from train::report so that tests and the throughput benchmark run
// them without a controller.
#pragma once

#include <torch/optim/sgd.h>

#include <filesystem>

#include "train/fashion_mnist/models.h"
#include "train/torch/data.h"
#include "train/torch/ddp.h"

namespace train::fashion_mnist {

struct EpochResult {
  double loss = 0.0;  // mean training loss over this rank's batches
  int64_t samples = 0;
};

// One pass over the loader's current epoch: zero (in place), forward,
// cross-entropy, backward (gradients averaged by `ddp`), step.
EpochResult train_epoch(Net& model, DistributedModel& ddp, torch::optim::SGD& optimizer,
                        const DistributedDataLoader& loader);

// Accuracy of `model` on the loader's samples (this rank's shard).
double evaluate(Net& model, const DistributedDataLoader& loader);

// Checkpoint files: model.pt, optimizer.pt (torch::save archives) and
// state.json ({"epoch": E}, the last epoch completed).
void save_checkpoint(const std::filesystem::path& dir, Net& model,
                     const torch::optim::SGD& optimizer, int64_t epoch);
// Loads what save_checkpoint wrote; returns the epoch stored. Throws
// tune::Error naming a missing or unreadable file.
int64_t load_checkpoint(const std::filesystem::path& dir, Net& model, torch::optim::SGD& optimizer);

}  // namespace train::fashion_mnist
