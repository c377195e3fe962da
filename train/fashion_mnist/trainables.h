// The Fashion-MNIST trainables, in the plug-in library
// libtunerun_fashion_mnist.so (next to the tunerun executable), so that
// only workers that train load libtorch:
//
//   fashion_mnist_mlp     Mlp (784 - hidden - hidden/2 - 10)
//   fashion_mnist_lenet   LeNet-5
//
// Hyperparameters (config keys, with defaults):
//   lr = 0.05, momentum = 0.9, weight_decay = 0.0  SGD
//   batch_size = 128                               per rank
//   hidden = 512                                   MLP width (LeNet ignores it)
//   epochs = 10                                    one report per epoch
//   train_subset = 0, test_subset = 0              > 0: use the first N samples
//   seed = 0                                       initial weights, shuffling
//   data_dir = ""                                  default: fashion_mnist::data_dir()
//
// Each epoch reports {"accuracy", "loss", "epoch"}: test accuracy and mean
// training loss, each the mean over ranks (every rank evaluates its shard),
// with a checkpoint (model.pt, optimizer.pt, state.json) from rank 0. A
// trial restored from a checkpoint continues at the epoch after the stored
// one. Threads per rank: OMP_NUM_THREADS (the controller sets it to the
// worker's CPUs), default 1.
#pragma once

#include "core/config.h"

namespace train::fashion_mnist {

// The train functions of fashion_mnist_mlp and fashion_mnist_lenet; each
// needs a worker session.
void mlp_trainable(const tune::Config& config);
void lenet_trainable(const tune::Config& config);

}  // namespace train::fashion_mnist

// Registers fashion_mnist_mlp and fashion_mnist_lenet (train/plugin.h); the
// plug-in library's one function of its own (plugin.cpp).
extern "C" void tunerun_register_trainables();
