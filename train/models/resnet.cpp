#include "train/models/resnet.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

namespace train::models {

namespace {

torch::nn::Conv2dOptions conv3x3(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false);
}

}  // namespace

BasicBlock::BasicBlock(int64_t in, int64_t out, int64_t stride) {
  c1_ = register_module("c1", torch::nn::Conv2d(conv3x3(in, out, stride)));
  b1_ = register_module("b1", torch::nn::BatchNorm2d(out));
  c2_ = register_module("c2", torch::nn::Conv2d(conv3x3(out, out, 1)));
  b2_ = register_module("b2", torch::nn::BatchNorm2d(out));
  shortcut_ = register_module("shortcut", torch::nn::Sequential());
  if (stride != 1 || in != out) {
    shortcut_->push_back(
        torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
    shortcut_->push_back(torch::nn::BatchNorm2d(out));
  }
}

torch::Tensor BasicBlock::forward(torch::Tensor x) {
  torch::Tensor y = torch::relu(b1_(c1_(x)));
  y = b2_(c2_(y));
  return torch::relu(y + (shortcut_->is_empty() ? x : shortcut_->forward(x)));
}

ResNet::ResNet(const ResNetOptions& o) : stem_pool_(o.stem_pool) {
  stem_ = register_module("stem", torch::nn::Conv2d(conv3x3(o.in_channels, o.width, 1)));
  stem_bn_ = register_module("stem_bn", torch::nn::BatchNorm2d(o.width));
  int64_t in = o.width;
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t out = o.width << stage;
    for (int64_t b = 0; b < o.blocks; ++b) {
      const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
      blocks_.push_back(register_module("block" + std::to_string(stage) + "_" + std::to_string(b),
                                        std::make_shared<BasicBlock>(in, out, stride)));
      in = out;
    }
  }
  fc_ = register_module("fc", torch::nn::Linear(in, o.classes));
}

torch::Tensor ResNet::forward(torch::Tensor x) {
  x = torch::relu(stem_bn_(stem_(x)));
  if (stem_pool_) x = torch::max_pool2d(x, 2);
  for (auto& block : blocks_) x = block->forward(x);
  return fc_(x.mean({2, 3}));
}

}  // namespace train::models
