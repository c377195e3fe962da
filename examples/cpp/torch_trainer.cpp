// Data-parallel training with train::TorchTrainer, then a sweep of it with
// tune::Tuner: a small MLP on Fashion-MNIST, 2 ranks per job (DDP over Gloo).
//
//   ./build/examples/torch_trainer [STORAGE_PATH] [--quick]    (default: runs)
//
// 1. trainer.fit(): one 2-rank job with train_loop_config as its config.
// 2. Tuner(trainer, ...): 4 jobs, lr searched, ASHA stopping the laggards.
// Like every Tuner program it is its own worker binary: fit() starts it again
// once per rank, so everything before fit() must be the same in every process.
#include "tune/trainer/torch_trainer.h"

#include <fmt/format.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <cstring>

#include "train/checkpoint.h"
#include "train/fashion_mnist/dataset.h"
#include "train/session.h"
#include "train/torch/data.h"
#include "train/torch/ddp.h"
#include "train/torch/device.h"
#include "train/torch/process_group.h"
#include "tune/tuner.h"

namespace {

struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(784, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    return fc2->forward(torch::relu(fc1->forward(x.view({x.size(0), 784}))));
  }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Mlp);

// One rank of a job. The process group, the sharded loader and gradient
// averaging are the three lines that make it data-parallel.
void train_func(const tune::Config& config) {
  namespace fm = train::fashion_mnist;
  // cuda:0 and NCCL when the controller gave this rank a GPU (use_gpu), else the CPU and Gloo.
  const c10::Device device = train::get_device();
  // Rendezvous at MASTER_ADDR:MASTER_PORT, the controller's pick for this job.
  train::init_process_group({.backend = train::default_backend()});
  const auto dir = fm::data_dir();
  auto train_data = train::prepare_data_loader(
      fm::load(fm::Split::kTrain, dir, config.get<int64_t>("train_subset")),
      config.get<int64_t>("batch_size"));
  auto test_data = train::prepare_data_loader(
      fm::load(fm::Split::kTest, dir, config.get<int64_t>("test_subset")), 1000,
      {.sampler = {.shuffle = false}});

  torch::manual_seed(0);
  Mlp model(config.get<int64_t>("hidden"));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(config.get<double>("lr")).momentum(0.9));
  auto ddp = train::prepare_model(*model);  // broadcast rank 0's weights, average gradients

  for (int64_t epoch = 0; epoch < config.get<int64_t>("epochs"); ++epoch) {
    train_data.set_epoch(epoch);
    double loss_sum = 0;
    int64_t batches = 0;
    for (const auto& batch : train_data) {
      ddp->zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(batch.data.to(device)),
                                                       batch.target.to(device));
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>();
      ++batches;
    }
    torch::NoGradGuard no_grad;
    int64_t correct = 0, seen = 0;
    for (const auto& batch : test_data) {
      correct += model->forward(batch.data.to(device))
                     .argmax(1)
                     .eq(batch.target.to(device))
                     .sum()
                     .item<int64_t>();
      seen += batch.data.size(0);
    }
    // Each rank evaluated its shard: report the mean over ranks.
    train::report({{"accuracy", static_cast<double>(correct) / static_cast<double>(seen)},
                   {"loss", loss_sum / static_cast<double>(std::max<int64_t>(batches, 1))}},
                  std::nullopt,
                  {.reduce = {{"accuracy", train::Reduce::kMean}, {"loss", train::Reduce::kMean}}});
  }
  train::destroy_process_group();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string storage = argc > 1 && argv[1][0] != '-' ? argv[1] : "runs";
  const bool quick = argc > 1 && std::strcmp(argv[argc - 1], "--quick") == 0;
  const tune::Json loop_config = {{"lr", 0.05},
                                  {"batch_size", 128},
                                  {"hidden", 128},
                                  {"epochs", quick ? 2 : 4},
                                  {"train_subset", quick ? 4000 : 20000},
                                  {"test_subset", quick ? 1000 : 5000}};
  tune::RunConfig run_config{.storage_path = storage, .verbosity = 0};
  train::TorchTrainer trainer("torch_trainer_job", train_func,
                              {.num_workers = 2, .resources_per_worker = {.cpus = 1}}, loop_config,
                              run_config);

  const tune::Result job = trainer.fit();
  fmt::print("one job: accuracy {:.4f} after {} epochs ({})\n",
             job.metrics["accuracy"].get<double>(), job.history.size(), job.path.string());

  run_config.name = "torch_trainer_sweep";
  tune::Tuner tuner(
      trainer, {{"lr", tune::loguniform(0.005, 0.2)}},
      {.metric = "accuracy",
       .mode = tune::Mode::kMax,
       .num_samples = 4,
       .scheduler = tune::schedulers::asha({.max_t = quick ? 2.0 : 4.0, .grace_period = 1})},
      run_config);
  const tune::ResultGrid grid = tuner.fit();
  const tune::Result& best = grid.get_best_result();
  fmt::print("sweep: best accuracy {:.4f} with lr {:.4g} ({} jobs, {} errors)\n",
             best.metrics["accuracy"].get<double>(), best.config["lr"].get<double>(), grid.size(),
             grid.num_errors());
  return grid.num_errors() == 0 ? 0 : 1;
}
