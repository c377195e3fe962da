// The models trained through the Trainer: shapes, the GPT's causality and
// generation, the tokenizer and the fortunes corpus.
#include <ATen/CPUGeneratorImpl.h>
#include <doctest/doctest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "train/loop/trainer.h"
#include "train/models/char_gpt.h"
#include "train/models/resnet.h"
#include "train/models/text.h"

namespace fs = std::filesystem;
using namespace train::models;

TEST_CASE("the small ResNet maps Fashion-MNIST images to 10 logits") {
  torch::manual_seed(0);
  ResNet net({.width = 8, .blocks = 1});
  CHECK(net.forward(torch::randn({3, 1, 28, 28})).sizes() == torch::IntArrayRef{3, 10});
  // The pooled stem runs the stages at 14, 7 and 4 pixels with the same weights.
  ResNet pooled({.width = 8, .blocks = 1, .stem_pool = true});
  CHECK(pooled.forward(torch::randn({3, 1, 28, 28})).sizes() == torch::IntArrayRef{3, 10});
  CHECK(pooled.parameters().size() == net.parameters().size());
}

TEST_CASE("the char-GPT is causal: a later token never changes earlier logits") {
  torch::manual_seed(0);
  CharGpt gpt({.vocab_size = 11, .context = 8, .layers = 2, .heads = 2, .width = 16});
  gpt.eval();
  auto ids = torch::randint(0, 11, {2, 8});
  auto changed = ids.clone();
  changed.index_put_({torch::indexing::Slice(), 5}, (ids.select(1, 5) + 1) % 11);
  auto a = gpt.forward(ids), b = gpt.forward(changed);
  CHECK(a.sizes() == torch::IntArrayRef{2, 8, 11});
  CHECK(torch::allclose(a.narrow(1, 0, 5), b.narrow(1, 0, 5)));
  CHECK_FALSE(torch::allclose(a.narrow(1, 5, 1), b.narrow(1, 5, 1)));
  CHECK_THROWS_AS(CharGpt({.heads = 3, .width = 16}), tune::ConfigError);
}

TEST_CASE("the char-GPT learns a repeated text through the Trainer and writes it back") {
  torch::set_num_threads(1);
  const std::string text = [] {
    std::string t;
    for (int i = 0; i < 60; ++i) t += "abcab\n";
    return t;
  }();
  CharTokenizer tokenizer(text);
  CHECK(tokenizer.vocab_size() == 4);
  CHECK(tokenizer.decode(tokenizer.encode("cab\n")) == "cab\n");
  CHECK_THROWS_AS(tokenizer.encode("z"), tune::ConfigError);
  auto windows = make_windows(tokenizer.encode(text), 12);
  CHECK(windows.data.sizes() == torch::IntArrayRef{29, 12});  // (360 - 1) / 12
  CHECK(torch::equal(windows.data[0].narrow(0, 1, 11), windows.target[0].narrow(0, 0, 11)));

  torch::manual_seed(0);
  auto gpt = std::make_shared<CharGpt>(CharGptOptions{
      .vocab_size = 4, .context = 12, .layers = 1, .heads = 2, .width = 16, .dropout = 0.0});
  train::Trainer trainer(gpt,
                         {.num_train_epochs = 30,
                          .per_device_train_batch_size = 8,
                          .learning_rate = 1e-2,
                          .eval_strategy = train::Interval::kEpoch,
                          .save_strategy = train::Interval::kNo},
                         windows, windows);
  trainer.train();
  CHECK(trainer.state().last_eval["eval_loss"].get<double>() < 0.2);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(1);
  auto line = tokenizer.decode(
      gpt->generate(tokenizer.encode("abcab\n"), 20, 0.1, generator, tokenizer.id('\n')));
  CHECK(line == "abcab\nabcab\n");  // windows start at a line's start
}

TEST_CASE("the fortunes corpus reads as printable text, or fails naming the directory") {
  auto empty = fs::temp_directory_path() / ("tunerun_no_fortunes_" + std::to_string(::getpid()));
  fs::create_directories(empty);
  CHECK_THROWS_WITH_AS(read_fortunes(empty), doctest::Contains(empty.string().c_str()),
                       tune::ConfigError);
  std::ofstream(empty / "jokes") << "A\tjoke\n%\nAnother\xff one\n%\n";
  std::ofstream(empty / "jokes.dat") << "index";
  CHECK(read_fortunes(empty) == "A joke\nAnother one\n");
  fs::remove_all(empty);
  if (!fs::exists(kFortunesDir)) {
    MESSAGE("skipped: no ", kFortunesDir, " (apt-get install fortunes)");
    return;
  }
  auto text = read_fortunes(kFortunesDir, 50000);
  CHECK(text.size() == 50000);
  CHECK(CharTokenizer(text).vocab_size() < 100);
}
