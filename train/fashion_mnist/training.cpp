#include "train/fashion_mnist/training.h"

#include <torch/nn/functional/loss.h>
#include <torch/serialize.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace train::fashion_mnist {

EpochResult train_epoch(Net& model, DistributedModel& ddp, torch::optim::SGD& optimizer,
                        const DistributedDataLoader& loader) {
  model.train();
  at::Tensor loss_sum = torch::zeros({}, torch::kDouble);
  EpochResult result;
  int64_t batches = 0;
  for (const Batch& batch : loader) {
    ddp.zero_grad();
    at::Tensor loss = torch::nn::functional::cross_entropy(model.forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    loss_sum += loss.detach();
    result.samples += batch.data.size(0);
    ++batches;
  }
  result.loss = batches > 0 ? loss_sum.item<double>() / static_cast<double>(batches) : 0.0;
  return result;
}

double evaluate(Net& model, const DistributedDataLoader& loader) {
  torch::NoGradGuard no_grad;
  model.eval();
  int64_t correct = 0, total = 0;
  for (const Batch& batch : loader) {
    correct += model.forward(batch.data).argmax(1).eq(batch.target).sum().item<int64_t>();
    total += batch.data.size(0);
  }
  model.train();
  return total > 0 ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
}

void save_checkpoint(const std::filesystem::path& dir, Net& model,
                     const torch::optim::SGD& optimizer, int64_t epoch) {
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  model_archive.save_to((dir / "model.pt").string());
  torch::save(optimizer, (dir / "optimizer.pt").string());
  std::ofstream state(dir / "state.json");
  state << nlohmann::json{{"epoch", epoch}}.dump() << "\n";
  if (!state.flush()) throw tune::StorageError((dir / "state.json").string() + ": write failed");
}

int64_t load_checkpoint(const std::filesystem::path& dir, Net& model,
                        torch::optim::SGD& optimizer) {
  std::ifstream state(dir / "state.json");
  if (!state) throw tune::StorageError((dir / "state.json").string() + ": cannot open");
  int64_t epoch = 0;
  try {
    epoch = nlohmann::json::parse(state).at("epoch").get<int64_t>();
    torch::serialize::InputArchive model_archive;
    model_archive.load_from((dir / "model.pt").string());
    model.load(model_archive);
    torch::load(optimizer, (dir / "optimizer.pt").string());
  } catch (const std::exception& e) {
    throw tune::StorageError(dir.string() + ": unreadable checkpoint: " + e.what());
  }
  return epoch;
}

}  // namespace train::fashion_mnist
