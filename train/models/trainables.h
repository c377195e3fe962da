// The trainables that train through train::Trainer, in the plug-in library
// libtunerun_models.so (next to the tunerun executable):
//
//   fashion_mnist_cnn   LeNet-5 or a small ResNet on Fashion-MNIST
//   char_gpt            a character-level GPT on Debian's fortunes
//
// Config keys shared by both (defaults per trainable below):
//   lr, weight_decay, warmup_ratio    AdamW with warmup
//   lr_scheduler = "cosine"           "constant" | "linear" | "cosine"
//   optim = "adamw"                   "adamw" | "sgd"
//   max_grad_norm = 1.0               <= 0: no clipping
//   batch_size                        per rank
//   gradient_accumulation_steps = 1
//   epochs                            passes over the training data
//   seed = 0
//
// fashion_mnist_cnn: model = "lenet" | "resnet" (default "resnet"), width =
// 16, blocks = 1 and stem_pool = false (ResNet, train/models/resnet.h),
// lr = 3e-3, weight_decay = 0.05, warmup_ratio = 0.05, batch_size = 128,
// epochs = 8, train_subset = test_subset = 0 (>0: the first N samples),
// data_dir. Evaluates on the test set and reports
// {"eval_accuracy", "eval_loss", "epoch", "step"} with a checkpoint every
// epoch.
//
// char_gpt: width = 64, layers = 2, heads = 4, context = 64, dropout = 0.1,
// lr = 3e-3, weight_decay = 0.1, warmup_ratio = 0.05, batch_size = 32,
// epochs = 1, eval_steps = 200 (evaluate, save and report every N steps),
// max_chars = 400000 (of the corpus; the last 10% validate), fortunes_dir.
// Reports {"eval_loss", "eval_perplexity", "sample", "epoch", "step"}:
// "sample" is a line the model writes after a newline (temperature 0.8).
//
// Multi-rank trials train data-parallel (prepare_trainer): each rank takes
// its shard of every batch, metrics are averaged over ranks.
#pragma once

#include "core/config.h"

namespace train::models {

void fashion_mnist_cnn(const tune::Config& config);
void char_gpt(const tune::Config& config);

}  // namespace train::models

// Registers fashion_mnist_cnn and char_gpt (train/plugin.h); the plug-in
// library's one function of its own (plugin.cpp).
extern "C" void tunerun_register_trainables();
