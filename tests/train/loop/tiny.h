// A tiny classifier and its data for the Trainer's tests: three classes
// from six features, learnable in a few steps.
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <memory>
#include <vector>

#include "train/torch/data.h"

namespace train::testing {

// Dropout makes the trajectory depend on the generator: a resume that did
// not restore it would differ.
struct Net : torch::nn::Module {
  explicit Net(double dropout = 0.0) {
    fc1 = register_module("fc1", torch::nn::Linear(6, 16));
    drop = register_module("drop", torch::nn::Dropout(dropout));
    fc2 = register_module("fc2", torch::nn::Linear(16, 3));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(drop(torch::relu(fc1(x)))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::Dropout drop{nullptr};
};

inline TensorDataset make_data(int64_t n, uint64_t seed = 7) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto x = torch::randn({n, 6}, generator);
  auto y = (x.narrow(1, 0, 3).argmax(1) + (x.select(1, 5) > 1).to(torch::kLong)) % 3;
  return {x, y};
}

inline std::shared_ptr<Net> make_net(uint64_t seed, double dropout = 0.0) {
  torch::manual_seed(seed);
  return std::make_shared<Net>(dropout);
}

inline std::vector<torch::Tensor> weights(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

inline bool identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i], b[i])) return false;
  }
  return a.size() == b.size();
}

inline bool close(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::allclose(a[i], b[i], 1e-4, 1e-6)) return false;
  }
  return a.size() == b.size();
}

}  // namespace train::testing
