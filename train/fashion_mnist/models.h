// The two Fashion-MNIST models, the same as benchmarks/anchors/torch_ddp_baseline.py
// so that throughput compares like with like.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <string>

namespace train::fashion_mnist {

// Input [N, 1, 28, 28]; output logits [N, 10].
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

// 784 - hidden - hidden/2 - 10 with ReLU; hidden = 512 is the baseline's.
class Mlp : public Net {
 public:
  explicit Mlp(int64_t hidden = 512);
  torch::Tensor forward(torch::Tensor x) override;

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
};

// LeNet-5: conv 5x5 (6, padded) - pool - conv 5x5 (16) - pool - 120 - 84 - 10.
class LeNet : public Net {
 public:
  LeNet();
  torch::Tensor forward(torch::Tensor x) override;

 private:
  torch::nn::Conv2d c1_{nullptr}, c2_{nullptr};
  torch::nn::Linear f1_{nullptr}, f2_{nullptr}, f3_{nullptr};
};

enum class ModelKind { kMlp, kLeNet };

std::shared_ptr<Net> make_model(ModelKind kind, int64_t hidden = 512);

}  // namespace train::fashion_mnist
