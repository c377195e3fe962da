// A small character-level GPT (Radford et al.; Karpathy's nanoGPT shape):
// token and learned position embeddings, `layers` pre-norm transformer
// blocks (causal multi-head self-attention, a 4x MLP with GELU, dropout),
// a final layer norm and a linear head over the vocabulary.
//
// layers 2, heads 4, width 64, context 64: ~110k parameters; a few minutes
// on two cores learn the shape of English text.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <cstdint>
#include <vector>

namespace train::models {

struct CharGptOptions {
  int64_t vocab_size = 96;
  int64_t context = 64;  // longest sequence (positions learned)
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t width = 64;  // embedding size; a multiple of heads
  double dropout = 0.1;
};

class CausalSelfAttention : public torch::nn::Module {
 public:
  explicit CausalSelfAttention(const CharGptOptions& options);
  torch::Tensor forward(torch::Tensor x);  // [B, T, width] -> [B, T, width]

 private:
  int64_t heads_;
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr};
  torch::nn::Dropout attn_drop_{nullptr}, resid_drop_{nullptr};
  torch::Tensor mask_;  // [context, context], -inf above the diagonal, 0 elsewhere
};

class GptBlock : public torch::nn::Module {
 public:
  explicit GptBlock(const CharGptOptions& options);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  std::shared_ptr<CausalSelfAttention> attn_;
  torch::nn::Linear fc_{nullptr}, fc_proj_{nullptr};
  torch::nn::Dropout drop_{nullptr};
};

class CharGpt : public torch::nn::Module {
 public:
  // Throws tune::ConfigError when width is not a multiple of heads.
  explicit CharGpt(const CharGptOptions& options);
  // Token ids [B, T] (T <= context) -> logits [B, T, vocab_size].
  torch::Tensor forward(torch::Tensor ids);
  // Appends up to `max_new` tokens sampled at `temperature` to `prompt`
  // (feeding the last `context` tokens), stopping after `stop` when >= 0.
  // Evaluation mode, no gradients.
  std::vector<int64_t> generate(std::vector<int64_t> prompt, int64_t max_new, double temperature,
                                at::Generator generator, int64_t stop = -1);
  const CharGptOptions& options() const { return options_; }

 private:
  CharGptOptions options_;
  torch::nn::Embedding tokens_{nullptr};
  torch::Tensor positions_;
  torch::nn::Dropout drop_{nullptr};
  std::vector<std::shared_ptr<GptBlock>> blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace train::models
