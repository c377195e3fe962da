// A trainable library for the multi-node DDP cases: "ddp_probe" trains a
// small MLP on synthetic data and reports, every step, fingerprints of the
// gradient DDP averaged (and of the parameters), so that runs with different
// layouts (2 nodes x 1 rank, 1 node x 2 ranks, 1 rank with the whole batch)
// can be compared through the results database.
//
// Config: seed, steps, batch (the global batch: rank r of W takes its W-th of
// every step's rows, so every layout sees the same samples per step).
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "train/session.h"
#include "train/torch/ddp.h"
#include "train/torch/process_group.h"
#include "train/trainable.h"

namespace {

struct Mlp : torch::nn::Module {
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(32, 128));
    fc2 = register_module("fc2", torch::nn::Linear(128, 128));
    fc3 = register_module("fc3", torch::nn::Linear(128, 10));
  }
  torch::Tensor forward(torch::Tensor x) { return fc3(torch::relu(fc2(torch::relu(fc1(x))))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

void ddp_probe(const tune::Config& config) {
  torch::set_num_threads(1);
  const auto& context = train::get_context();
  const int64_t seed = config.get<int64_t>("seed", 0);
  const int64_t steps = config.get<int64_t>("steps", 5);
  const int64_t batch = config.get<int64_t>("batch", 32);
  const int64_t world = context.world_size;
  if (batch % world != 0) throw tune::Error("ddp_probe: batch must divide by the world size");
  const int64_t per_rank = batch / world;

  train::ProcessGroupScope group;
  torch::manual_seed(seed + 1000);  // the same data on every rank and in every layout
  const torch::Tensor x = torch::randn({steps * batch, 32});
  const torch::Tensor y = torch::randint(0, 10, {steps * batch});
  torch::manual_seed(seed);
  Mlp net;
  auto ddp = train::prepare_model(net);
  torch::optim::SGD optimizer(net.parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const train::ReportOptions mean_loss{.reduce = {{"loss", train::Reduce::kMean}}};
  for (int64_t step = 0; step < steps; ++step) {
    ddp->zero_grad();
    const int64_t first = step * batch + context.world_rank * per_rank;
    auto loss = torch::nn::functional::cross_entropy(net.forward(x.narrow(0, first, per_rank)),
                                                     y.narrow(0, first, per_rank));
    loss.backward();
    double grad_sum = 0, grad_sq = 0, param_sum = 0;
    for (const auto& p : net.parameters()) {
      const auto g = p.grad().to(torch::kDouble);
      grad_sum += g.sum().item<double>();
      grad_sq += g.square().sum().item<double>();
    }
    optimizer.step();
    for (const auto& p : net.parameters()) param_sum += p.to(torch::kDouble).sum().item<double>();
    const auto stats = ddp->stats();
    train::report({{"loss", loss.item<double>()},
                   {"grad_sum", grad_sum},
                   {"grad_norm", std::sqrt(grad_sq)},
                   {"param_sum", param_sum},
                   {"ddp_nodes", stats.nodes},
                   {"ddp_shared_memory", stats.shared_memory},
                   {"num_nodes", context.num_nodes}},
                  std::nullopt, mean_loss);
  }
}

}  // namespace

extern "C" void tunerun_register_trainables() { train::register_trainable("ddp_probe", ddp_probe); }
