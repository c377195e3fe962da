#include "train/models/char_gpt.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/init.h>

#include "core/errors.h"

namespace train::models {

CausalSelfAttention::CausalSelfAttention(const CharGptOptions& o) : heads_(o.heads) {
  qkv_ = register_module("qkv", torch::nn::Linear(o.width, 3 * o.width));
  proj_ = register_module("proj", torch::nn::Linear(o.width, o.width));
  attn_drop_ = register_module("attn_drop", torch::nn::Dropout(o.dropout));
  resid_drop_ = register_module("resid_drop", torch::nn::Dropout(o.dropout));
  // Additive (0 or -inf): one add masks the scores, as HF GPT-2 does.
  mask_ = register_buffer("mask", torch::full({o.context, o.context}, -INFINITY).triu(1));
}

torch::Tensor CausalSelfAttention::forward(torch::Tensor x) {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2);
  auto qkv = qkv_(x).view({b, t, 3, heads_, c / heads_}).permute({2, 0, 3, 1, 4});
  torch::Tensor q = qkv[0], k = qkv[1], v = qkv[2];  // [B, heads, T, head_size]
  torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(c / heads_));
  att = att + mask_.narrow(0, 0, t).narrow(1, 0, t);
  att = attn_drop_(torch::softmax(att, -1));
  torch::Tensor y = torch::matmul(att, v).transpose(1, 2).reshape({b, t, c});
  return resid_drop_(proj_(y));
}

GptBlock::GptBlock(const CharGptOptions& o) {
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width})));
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(o));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width})));
  fc_ = register_module("fc", torch::nn::Linear(o.width, 4 * o.width));
  fc_proj_ = register_module("fc_proj", torch::nn::Linear(4 * o.width, o.width));
  drop_ = register_module("drop", torch::nn::Dropout(o.dropout));
}

torch::Tensor GptBlock::forward(torch::Tensor x) {
  x = x + attn_->forward(ln1_(x));
  return x + drop_(fc_proj_(torch::gelu(fc_(ln2_(x)))));
}

CharGpt::CharGpt(const CharGptOptions& o) : options_(o) {
  if (o.heads < 1 || o.width % o.heads != 0) {
    throw tune::ConfigError("CharGpt: width " + std::to_string(o.width) +
                            " is not a multiple of heads " + std::to_string(o.heads));
  }
  tokens_ = register_module("tokens", torch::nn::Embedding(o.vocab_size, o.width));
  positions_ = register_parameter("positions", torch::zeros({o.context, o.width}));
  drop_ = register_module("drop", torch::nn::Dropout(o.dropout));
  for (int64_t i = 0; i < o.layers; ++i) {
    blocks_.push_back(register_module("block" + std::to_string(i), std::make_shared<GptBlock>(o)));
  }
  ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width})));
  head_ = register_module("head", torch::nn::Linear(o.width, o.vocab_size));
  // GPT-2's initialisation: N(0, 0.02) for weights and embeddings.
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters()) {
    if (p.key().find("ln") != std::string::npos) continue;
    if (p.value().dim() >= 2)
      torch::nn::init::normal_(p.value(), 0.0, 0.02);
    else
      p.value().zero_();
  }
}

torch::Tensor CharGpt::forward(torch::Tensor ids) {
  const int64_t t = ids.size(1);
  torch::Tensor x = drop_(tokens_(ids) + positions_.narrow(0, 0, t));
  for (auto& block : blocks_) x = block->forward(x);
  return head_(ln_f_(x));
}

std::vector<int64_t> CharGpt::generate(std::vector<int64_t> prompt, int64_t max_new,
                                       double temperature, at::Generator generator, int64_t stop) {
  torch::NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  const auto device = positions_.device();
  for (int64_t i = 0; i < max_new; ++i) {
    const int64_t start =
        std::max<int64_t>(0, static_cast<int64_t>(prompt.size()) - options_.context);
    std::vector<int64_t> window(prompt.begin() + start, prompt.end());
    torch::Tensor ids = torch::tensor(window, torch::kLong).unsqueeze(0).to(device);
    torch::Tensor logits = forward(ids).select(1, -1).squeeze(0).to(torch::kCPU, torch::kFloat);
    torch::Tensor probs = torch::softmax(logits / std::max(temperature, 1e-6), -1);
    const int64_t next = at::multinomial(probs, 1, false, generator).item<int64_t>();
    prompt.push_back(next);
    if (next == stop) break;
  }
  train(was_training);
  return prompt;
}

}  // namespace train::models
