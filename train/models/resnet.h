// A small residual network for 28x28 grey images (Fashion-MNIST): He et
// al.'s CIFAR ResNet shape at a fraction of the width. A 3x3 stem, then
// three stages of `blocks` basic blocks (two 3x3 convolutions with batch
// norm, identity or 1x1-projection shortcut) at width w, 2w, 4w and
// resolution 28, 14, 7, then global average pooling and a linear layer.
// With stem_pool, a 2x2 max pooling after the stem (as ImageNet's ResNets
// pool at theirs) halves the resolution of every stage (14, 7, 4): a quarter
// of the multiply-adds, and at width 8 an epoch of Fashion-MNIST in 0.45 of
// the CPU time, no less accurate (examples/fashion_mnist.toml).
//
// width 16, blocks 1: ~78k parameters, ~12 MFLOP per image (LeNet-5: ~0.9);
// with stem_pool ~3 MFLOP.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace train::models {

struct ResNetOptions {
  int64_t width = 16;  // channels of the first stage; the others double
  int64_t blocks = 1;  // basic blocks per stage
  int64_t classes = 10;
  int64_t in_channels = 1;  // grey images
  bool stem_pool = false;   // 2x2 max pooling after the stem
};

class BasicBlock : public torch::nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d c1_{nullptr}, c2_{nullptr};
  torch::nn::BatchNorm2d b1_{nullptr}, b2_{nullptr};
  torch::nn::Sequential shortcut_{nullptr};  // empty: identity
};

class ResNet : public torch::nn::Module {
 public:
  explicit ResNet(const ResNetOptions& options = {});
  // [N, in_channels, H, W] -> logits [N, classes].
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<std::shared_ptr<BasicBlock>> blocks_;
  torch::nn::Linear fc_{nullptr};
  bool stem_pool_ = false;
};

}  // namespace train::models
