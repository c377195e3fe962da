// libtunerun_fashion_mnist.so's entry point: the trainables' code is in
// tunerun_torch, which the library links.
#include "train/fashion_mnist/trainables.h"
#include "train/trainable.h"

extern "C" void tunerun_register_trainables() {
  train::register_trainable("fashion_mnist_mlp", train::fashion_mnist::mlp_trainable);
  train::register_trainable("fashion_mnist_lenet", train::fashion_mnist::lenet_trainable);
}
