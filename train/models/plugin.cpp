// libtunerun_models.so's entry point: the trainables' code is in
// tunerun_torch, which the library links.
#include "train/models/trainables.h"
#include "train/trainable.h"

extern "C" void tunerun_register_trainables() {
  train::register_trainable("fashion_mnist_cnn", train::models::fashion_mnist_cnn);
  train::register_trainable("char_gpt", train::models::char_gpt);
}
