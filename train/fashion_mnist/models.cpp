#include "train/fashion_mnist/models.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

namespace train::fashion_mnist {

namespace F = torch::nn::functional;

Mlp::Mlp(int64_t hidden) {
  fc1_ = register_module("fc1", torch::nn::Linear(784, hidden));
  fc2_ = register_module("fc2", torch::nn::Linear(hidden, hidden / 2));
  fc3_ = register_module("fc3", torch::nn::Linear(hidden / 2, 10));
}

torch::Tensor Mlp::forward(torch::Tensor x) {
  x = x.flatten(1);
  return fc3_(torch::relu(fc2_(torch::relu(fc1_(x)))));
}

LeNet::LeNet() {
  c1_ = register_module("c1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5).padding(2)));
  c2_ = register_module("c2", torch::nn::Conv2d(6, 16, 5));
  f1_ = register_module("f1", torch::nn::Linear(400, 120));
  f2_ = register_module("f2", torch::nn::Linear(120, 84));
  f3_ = register_module("f3", torch::nn::Linear(84, 10));
}

torch::Tensor LeNet::forward(torch::Tensor x) {
  x = torch::max_pool2d(torch::relu(c1_(x)), 2);
  x = torch::max_pool2d(torch::relu(c2_(x)), 2);
  return f3_(torch::relu(f2_(torch::relu(f1_(x.flatten(1))))));
}

std::shared_ptr<Net> make_model(ModelKind kind, int64_t hidden) {
  if (kind == ModelKind::kMlp) return std::make_shared<Mlp>(hidden);
  return std::make_shared<LeNet>();
}

}  // namespace train::fashion_mnist
