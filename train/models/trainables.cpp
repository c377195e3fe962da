#include "train/models/trainables.h"

#include <ATen/ATen.h>

#include <cmath>

#include "train/fashion_mnist/dataset.h"
#include "train/fashion_mnist/models.h"
#include "train/loop/prepare_trainer.h"
#include "train/loop/trainer.h"
#include "train/models/char_gpt.h"
#include "train/models/resnet.h"
#include "train/models/text.h"
#include "train/torch/device.h"
#include "train/trainable.h"

namespace train::models {

namespace {

// The config keys both trainables share, over their own defaults.
TrainingArguments arguments(const tune::Config& c, const TrainingArguments& d) {
  TrainingArguments a = d;
  a.num_train_epochs = c.get<int64_t>("epochs", d.num_train_epochs);
  a.per_device_train_batch_size = c.get<int64_t>("batch_size", d.per_device_train_batch_size);
  a.gradient_accumulation_steps =
      c.get<int64_t>("gradient_accumulation_steps", d.gradient_accumulation_steps);
  a.learning_rate = c.get<double>("lr", d.learning_rate);
  a.weight_decay = c.get<double>("weight_decay", d.weight_decay);
  a.warmup_ratio = c.get<double>("warmup_ratio", d.warmup_ratio);
  a.max_grad_norm = c.get<double>("max_grad_norm", d.max_grad_norm);
  a.lr_scheduler = parse_lr_schedule(c.get<std::string>("lr_scheduler", "cosine"));
  a.optim = parse_optimizer(c.get<std::string>("optim", "adamw"));
  a.seed = static_cast<uint64_t>(c.get<int64_t>("seed", 0));
  a.logging_strategy = Interval::kNo;
  return a;
}

}  // namespace

void fashion_mnist_cnn(const tune::Config& config) {
  namespace fm = train::fashion_mnist;
  use_rank_threads();
  ProcessGroupScope group;
  const auto dir = fm::data_dir(config.get<std::string>("data_dir", ""));
  auto train_data = fm::load(fm::Split::kTrain, dir, config.get<int64_t>("train_subset", 0));
  auto test_data = fm::load(fm::Split::kTest, dir, config.get<int64_t>("test_subset", 0));
  TrainingArguments args = arguments(config, {.num_train_epochs = 8,
                                              .per_device_train_batch_size = 128,
                                              .per_device_eval_batch_size = 1000,
                                              .learning_rate = 3e-3,
                                              .weight_decay = 0.05,
                                              .warmup_ratio = 0.05,
                                              .eval_strategy = Interval::kEpoch,
                                              .save_strategy = Interval::kEpoch});
  torch::manual_seed(args.seed);  // the initial weights
  const auto kind = config.get<std::string>("model", "resnet");
  std::optional<Trainer> trainer;
  if (kind == "lenet") {
    trainer.emplace(std::make_shared<fm::LeNet>(), args, train_data, test_data, accuracy_metrics);
  } else if (kind == "resnet") {
    ResNetOptions options{.width = config.get<int64_t>("width", 16),
                          .blocks = config.get<int64_t>("blocks", 1),
                          .stem_pool = config.get<bool>("stem_pool", false)};
    trainer.emplace(std::make_shared<ResNet>(options), args, train_data, test_data,
                    accuracy_metrics);
  } else {
    throw tune::ConfigError("fashion_mnist_cnn: model '" + kind + "' is not lenet or resnet");
  }
  trainer->add_callback(ReportCallback{});
  Trainer prepared = prepare_trainer(std::move(*trainer));
  prepared.train();
}

namespace {

// Adds "eval_perplexity" = exp(eval_loss), and a line the model writes.
class PerplexityAndSample : public TrainerCallback {
 public:
  PerplexityAndSample(std::shared_ptr<CharGpt> model, const CharTokenizer& tokenizer, uint64_t seed)
      : model_(std::move(model)), tokenizer_(tokenizer), seed_(seed) {}
  void on_evaluate(const TrainingArguments&, TrainerState&, TrainerControl&,
                   tune::Json& metrics) override {
    metrics["eval_perplexity"] = std::exp(metrics.at("eval_loss").get<double>());
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed_);
    const int64_t newline = tokenizer_.id('\n');
    auto ids = model_->generate({newline}, 100, 0.8, generator, newline);
    std::string line = tokenizer_.decode(ids).substr(1);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    metrics["sample"] = line;
  }

 private:
  std::shared_ptr<CharGpt> model_;
  const CharTokenizer& tokenizer_;
  uint64_t seed_;
};

}  // namespace

void char_gpt(const tune::Config& config) {
  use_rank_threads();
  ProcessGroupScope group;
  const std::string text = read_fortunes(config.get<std::string>("fortunes_dir", kFortunesDir),
                                         config.get<int64_t>("max_chars", 400000));
  const CharTokenizer tokenizer(text);
  const int64_t context = config.get<int64_t>("context", 64);
  const auto split = static_cast<int64_t>(text.size() * 9 / 10);
  auto train_data = make_windows(tokenizer.encode(text.substr(0, split)), context);
  auto eval_data = make_windows(tokenizer.encode(text.substr(split)), context);
  TrainingArguments args = arguments(config, {.num_train_epochs = 1,
                                              .per_device_train_batch_size = 32,
                                              .per_device_eval_batch_size = 128,
                                              .learning_rate = 3e-3,
                                              .weight_decay = 0.1,
                                              .warmup_ratio = 0.05});
  const int64_t every = config.get<int64_t>("eval_steps", 200);
  args.eval_strategy = args.save_strategy = Interval::kSteps;
  args.eval_steps = args.save_steps = every;
  torch::manual_seed(args.seed);
  auto model =
      std::make_shared<CharGpt>(CharGptOptions{.vocab_size = tokenizer.vocab_size(),
                                               .context = context,
                                               .layers = config.get<int64_t>("layers", 2),
                                               .heads = config.get<int64_t>("heads", 4),
                                               .width = config.get<int64_t>("width", 64),
                                               .dropout = config.get<double>("dropout", 0.1)});
  Trainer trainer(model, args, train_data, eval_data);
  trainer.add_callback(std::make_shared<PerplexityAndSample>(model, tokenizer, args.seed));
  trainer.add_callback(ReportCallback{});
  trainer = prepare_trainer(std::move(trainer));
  trainer.train();
}

}  // namespace train::models
