// The Trainer's checkpoint housekeeping in output_dir: save_total_limit
// deletes the oldest checkpoints, load_best_model_at_end ends with the best
// one's weights (HF's rules for both).
#include <doctest/doctest.h>
#include <torch/nn/module.h>
#include <torch/serialize.h>

#include <filesystem>
#include <map>
#include <set>

#include "../torch/temp_dir.h"
#include "tiny.h"
#include "train/loop/trainer.h"

namespace fs = std::filesystem;

using train::testing::identical;
using train::testing::make_data;
using train::testing::make_net;
using train::testing::temp_dir;
using train::testing::weights;

namespace {

std::set<std::string> checkpoints(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

// compute_metrics giving "score" from a script, one value per evaluation.
train::ComputeMetrics scripted(std::vector<double> scores) {
  auto next = std::make_shared<size_t>(0);
  return [scores, next](const train::EvalPrediction&) {
    return tune::Json{{"score", scores.at((*next)++)}};
  };
}

// Keeps each checkpoint's weights as the loop saved them.
struct WeightsAtSave : train::TrainerCallback {
  explicit WeightsAtSave(torch::nn::Module& m) : module(m) {}
  void on_save(const train::TrainingArguments&, train::TrainerState& state, train::TrainerControl&,
               const fs::path&) override {
    saved[state.global_step] = weights(module);
  }
  torch::nn::Module& module;
  std::map<int64_t, std::vector<torch::Tensor>> saved;
};

train::TrainingArguments every_step(const fs::path& dir, int64_t steps) {
  return {.output_dir = dir,
          .max_steps = steps,
          .per_device_train_batch_size = 4,
          .learning_rate = 0.05,
          .eval_strategy = train::Interval::kSteps,
          .eval_steps = 1,
          .save_strategy = train::Interval::kSteps,
          .save_steps = 1};
}

}  // namespace

TEST_CASE("save_total_limit keeps the newest checkpoints") {
  auto dir = temp_dir("save_total_limit");
  auto args = every_step(dir, 5);
  args.save_total_limit = 2;
  train::Trainer trainer(make_net(1), args, make_data(16), make_data(8, 9));
  trainer.train();
  CHECK(checkpoints(dir) == std::set<std::string>{"checkpoint-4", "checkpoint-5"});
  fs::remove_all(dir);
}

TEST_CASE("load_best_model_at_end ends with the best checkpoint's weights, which rotation keeps") {
  auto dir = temp_dir("load_best");
  auto args = every_step(dir, 4);
  args.save_total_limit = 1;
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "score";  // larger is better: not the loss
  auto net = make_net(1);
  auto saved = std::make_shared<WeightsAtSave>(*net);
  train::Trainer trainer(net, args, make_data(16), make_data(8, 9), scripted({0.5, 0.9, 0.7, 0.8}));
  trainer.add_callback(saved);
  trainer.train();
  REQUIRE(saved->saved.size() == 4);
  CHECK(trainer.state().best_metric == 0.9);
  CHECK(trainer.state().best_model_checkpoint == dir / "checkpoint-2");
  CHECK(identical(weights(*net), saved->saved[2]));
  CHECK_FALSE(identical(weights(*net), saved->saved[4]));
  // A limit of 1 keeps the best and, to resume from, the last.
  CHECK(checkpoints(dir) == std::set<std::string>{"checkpoint-2", "checkpoint-4"});

  // The loss: smaller is better, unless told otherwise.
  for (bool greater : {false, true}) {
    CAPTURE(greater);
    fs::remove_all(dir);
    args.save_total_limit = 0;
    args.metric_for_best_model = "loss";
    args.greater_is_better = greater ? std::optional<bool>(true) : std::nullopt;
    train::Trainer by_loss(make_net(1), args, make_data(16), make_data(8, 9));
    by_loss.train();
    double best = greater ? -1e9 : 1e9;
    for (const auto& entry : by_loss.state().log_history) {
      if (!entry.contains("eval_loss")) continue;
      const double loss = entry["eval_loss"].get<double>();
      best = greater ? std::max(best, loss) : std::min(best, loss);
    }
    CHECK(by_loss.state().best_metric == best);
  }
  fs::remove_all(dir);
}

TEST_CASE("a resumed run remembers the best checkpoint it had") {
  auto dir = temp_dir("load_best_resume");
  auto args = every_step(dir / "first", 4);
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "score";
  train::Trainer first(make_net(1), args, make_data(16), make_data(8, 9),
                       scripted({0.5, 0.9, 0.7, 0.8}));
  first.train();
  // Resumed at step 3, the later evaluations (0.6) never beat step 2's 0.9.
  args.max_steps = 5;
  auto net = make_net(2);
  train::Trainer resumed(net, args, make_data(16), make_data(8, 9), scripted({0.6, 0.6}));
  resumed.train(dir / "first" / "checkpoint-3");
  CHECK(resumed.state().best_metric == 0.9);
  CHECK(resumed.state().best_model_checkpoint == dir / "first" / "checkpoint-2");
  auto best = make_net(3);
  torch::serialize::InputArchive archive;
  archive.load_from((dir / "first" / "checkpoint-2" / "model.pt").string());
  best->load(archive);
  CHECK(identical(weights(*net), weights(*best)));
  fs::remove_all(dir);
}

TEST_CASE("checkpoint housekeeping refuses what it cannot honour, naming the field") {
  auto fails = [](train::TrainingArguments args, const char* field) {
    CAPTURE(field);
    CHECK_THROWS_WITH_AS(train::Trainer(make_net(1), args, make_data(8)), doctest::Contains(field),
                         tune::ConfigError);
  };
  fails({.save_total_limit = 2}, "save_total_limit");  // no output_dir
  fails({.output_dir = "out", .save_total_limit = -1}, "save_total_limit");
  fails({.output_dir = "out",
         .eval_strategy = train::Interval::kEpoch,
         .save_strategy = train::Interval::kSteps,
         .load_best_model_at_end = true},
        "load_best_model_at_end");
  fails({.output_dir = "out",
         .eval_strategy = train::Interval::kSteps,
         .eval_steps = 3,
         .save_strategy = train::Interval::kSteps,
         .save_steps = 4,
         .load_best_model_at_end = true},
        "eval_steps");

  // A metric the evaluation lacks fails at the first save.
  auto dir = temp_dir("load_best_bad_metric");
  auto args = every_step(dir, 2);
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "accuracy";
  train::Trainer trainer(make_net(1), args, make_data(16), make_data(8, 9));
  CHECK_THROWS_WITH_AS(trainer.train(), doctest::Contains("eval_accuracy"), tune::ConfigError);
  fs::remove_all(dir);
}
