// train::Trainer on tiny models and data: resume bit for bit, gradient
// accumulation, the schedule in the loop, ReportCallback, early stopping,
// and prepare_trainer over two ranks (threads, ../torch/ranks.h).
#include "train/loop/trainer.h"

#include <doctest/doctest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <filesystem>
#include <mutex>

#include "../torch/ranks.h"
#include "../torch/temp_dir.h"
#include "tiny.h"
#include "train/loop/prepare_trainer.h"

namespace fs = std::filesystem;

using train::testing::close;
using train::testing::identical;
using train::testing::make_data;
using train::testing::make_net;
using train::testing::Net;
using train::testing::temp_dir;
using train::testing::weights;

namespace {

// Records what the loop logs and reports.
struct Recorder : train::TrainerCallback {
  std::vector<tune::Json> logs;
  void on_log(const train::TrainerState&, const tune::Json& entry) override {
    logs.push_back(entry);
  }
};

}  // namespace

TEST_CASE("a run resumed from a checkpoint ends bit for bit where the uninterrupted one does") {
  torch::set_num_threads(1);
  auto data = make_data(40), eval = make_data(16, 8);
  auto dir = temp_dir("resume");
  train::TrainingArguments args{.output_dir = dir / "full",
                                .num_train_epochs = 3,
                                .per_device_train_batch_size = 4,
                                .learning_rate = 0.01,
                                .weight_decay = 0.1,
                                .lr_scheduler = train::LrSchedule::kCosine,
                                .warmup_steps = 3,
                                .max_grad_norm = 0.5,
                                .eval_strategy = train::Interval::kEpoch,
                                .save_strategy = train::Interval::kSteps,
                                .save_steps = 5,
                                .logging_steps = 4};
  auto net = make_net(1, 0.3);
  train::Trainer full(net, args, data, eval);
  full.train();
  CHECK(full.state().global_step == 30);  // 10 batches x 3 epochs
  const auto expected = weights(*net);

  // Mid-epoch (step 5 of 10) and in the second epoch (step 15).
  for (int step : {5, 15}) {
    CAPTURE(step);
    REQUIRE(fs::exists(dir / "full" / ("checkpoint-" + std::to_string(step)) / "model.pt"));
    auto other = make_net(99, 0.3);  // other weights: the checkpoint must replace them
    args.output_dir = dir / ("resumed_" + std::to_string(step));
    train::Trainer resumed(other, args, data, eval);
    resumed.train(dir / "full" / ("checkpoint-" + std::to_string(step)));
    CHECK(resumed.state().global_step == 30);
    CHECK(identical(weights(*other), expected));
  }

  // Without the generator state, dropout draws other masks: the check can fail.
  fs::remove(dir / "full" / "checkpoint-15" / "rng_state_0.pt");
  auto other = make_net(99, 0.3);
  train::Trainer no_rng(other, args, data, eval);
  no_rng.train(dir / "full" / "checkpoint-15");
  CHECK_FALSE(identical(weights(*other), expected));
  fs::remove_all(dir);
}

TEST_CASE("an unreadable checkpoint is a StorageError naming the directory") {
  auto dir = temp_dir("bad_checkpoint");
  train::Trainer trainer(make_net(1), {.max_steps = 2}, make_data(8));
  CHECK_THROWS_WITH_AS(trainer.train(dir), doctest::Contains(dir.string().c_str()),
                       tune::StorageError);
  fs::remove_all(dir);
}

TEST_CASE("k accumulated steps of batch b equal one step of batch k*b") {
  torch::set_num_threads(1);
  auto data = make_data(64);
  auto run = [&](int64_t batch, int64_t accumulation) {
    auto net = make_net(3);
    train::Trainer trainer(net,
                           {.num_train_epochs = 2,
                            .per_device_train_batch_size = batch,
                            .gradient_accumulation_steps = accumulation,
                            .learning_rate = 0.05,
                            .lr_scheduler = train::LrSchedule::kLinear,
                            .warmup_steps = 2,
                            .max_grad_norm = 1.0,
                            .save_strategy = train::Interval::kNo},
                           data);
    trainer.train();
    CHECK(trainer.state().global_step == 2 * 64 / (batch * accumulation));
    return weights(*net);
  };
  const auto one_big = run(16, 1);
  CHECK(close(run(4, 4), one_big));
  CHECK(close(run(8, 2), one_big));
  CHECK_FALSE(close(run(4, 1), one_big));  // not accumulating trains differently
}

TEST_CASE("the loop steps with the schedule's rate and logs it") {
  auto recorder = std::make_shared<Recorder>();
  train::Trainer trainer(make_net(1),
                         {.max_steps = 10,
                          .per_device_train_batch_size = 4,
                          .learning_rate = 1.0,
                          .lr_scheduler = train::LrSchedule::kCosine,
                          .warmup_steps = 2,
                          .save_strategy = train::Interval::kNo,
                          .logging_steps = 1},
                         make_data(16));
  trainer.add_callback(recorder);
  trainer.train();
  REQUIRE(recorder->logs.size() == 10);
  // Step s (1-based in the log) used the rate of optimizer step s - 1.
  CHECK(recorder->logs[0]["learning_rate"].get<double>() == doctest::Approx(0.0));
  CHECK(recorder->logs[1]["learning_rate"].get<double>() == doctest::Approx(0.5));
  CHECK(recorder->logs[4]["learning_rate"].get<double>() == doctest::Approx(0.8535534));
  CHECK(recorder->logs[6]["learning_rate"].get<double>() == doctest::Approx(0.5));
  CHECK(recorder->logs[9]["step"] == 10);
  CHECK(recorder->logs[9]["epoch"].get<double>() == doctest::Approx(2.5));  // 4 steps per epoch
}

TEST_CASE("ReportCallback reports once per save, with the checkpoint just written") {
  auto dir = temp_dir("report");
  struct Report {
    tune::Json metrics;
    fs::path checkpoint;
  };
  std::vector<Report> reports;
  train::Trainer trainer(make_net(1),
                         {.output_dir = dir,
                          .num_train_epochs = 3,
                          .per_device_train_batch_size = 8,
                          .learning_rate = 0.01,
                          .eval_strategy = train::Interval::kEpoch,
                          .save_strategy = train::Interval::kEpoch},
                         make_data(32), make_data(16, 9), train::accuracy_metrics);
  trainer.add_callback(train::ReportCallback([&](const tune::Json& metrics, const fs::path& c) {
    reports.push_back({metrics, c});
  }));
  trainer.train();
  REQUIRE(reports.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(reports[i].metrics["step"] == 4 * (i + 1));
    CHECK(reports[i].metrics["epoch"].get<double>() == doctest::Approx(i + 1));
    CHECK(reports[i].metrics.contains("eval_loss"));
    CHECK(reports[i].metrics["eval_accuracy"].get<double>() >= 0.0);
    CHECK(reports[i].checkpoint == dir / ("checkpoint-" + std::to_string(4 * (i + 1))));
    CHECK(fs::exists(reports[i].checkpoint / "model.pt"));
    CHECK(fs::exists(reports[i].checkpoint / "optimizer.pt"));
    CHECK(fs::exists(reports[i].checkpoint / "trainer_state.json"));
  }
  fs::remove_all(dir);
}

TEST_CASE("early stopping stops after `patience` evaluations without improvement") {
  auto stopper = std::make_shared<train::EarlyStoppingCallback>(
      train::EarlyStoppingOptions{.metric = "eval_loss", .patience = 2});
  // A zero learning rate: the loss never improves after the first evaluation.
  train::Trainer trainer(make_net(1),
                         {.max_steps = 100,
                          .per_device_train_batch_size = 4,
                          .learning_rate = 0.0,
                          .eval_strategy = train::Interval::kSteps,
                          .eval_steps = 1,
                          .save_strategy = train::Interval::kNo},
                         make_data(16), make_data(8, 9));
  trainer.add_callback(stopper);
  trainer.train();
  CHECK(trainer.state().global_step == 3);
  CHECK(stopper->evaluations_without_improvement() == 2);

  // A metric the evaluation lacks is a configuration error, not a silent no-op.
  train::Trainer wrong(make_net(1),
                       {.max_steps = 5,
                        .eval_strategy = train::Interval::kSteps,
                        .eval_steps = 1,
                        .save_strategy = train::Interval::kNo},
                       make_data(16), make_data(8, 9));
  wrong.add_callback(train::EarlyStoppingCallback({.metric = "eval_accuracy"}));
  CHECK_THROWS_WITH_AS(wrong.train(), doctest::Contains("eval_accuracy"), tune::ConfigError);
}

TEST_CASE("two ranks through prepare_trainer train as one rank with the double batch") {
  torch::set_num_threads(1);
  auto data = make_data(48), eval = make_data(20, 9);
  train::TrainingArguments args{.num_train_epochs = 2,
                                .per_device_train_batch_size = 6,
                                .per_device_eval_batch_size = 5,
                                .learning_rate = 0.02,
                                .weight_decay = 0.01,
                                .lr_scheduler = train::LrSchedule::kCosine,
                                .warmup_steps = 1,
                                .eval_strategy = train::Interval::kEpoch,
                                .save_strategy = train::Interval::kNo};
  auto single_net = make_net(5);
  train::TrainingArguments single_args = args;
  single_args.per_device_train_batch_size = 12;
  train::Trainer single(single_net, single_args, data, eval, train::accuracy_metrics);
  single.train();
  const auto expected = weights(*single_net);

  std::mutex mutex;
  std::vector<std::vector<torch::Tensor>> results(2);
  std::vector<tune::Json> evals(2);
  // Made before the ranks start: make_net seeds the global generator, which
  // must not change under a rank that is already training. Rank 0's weights
  // are broadcast.
  const std::vector<std::shared_ptr<Net>> nets = {make_net(5), make_net(77)};
  train::testing::run_ranks(2, [&](int rank, c10::intrusive_ptr<c10d::ProcessGroup> group) {
    std::shared_ptr<Net> net = nets[rank];
    train::Trainer trainer(net, args, data, eval, train::accuracy_metrics);
    trainer = train::prepare_trainer(std::move(trainer), group);
    trainer.train();
    std::lock_guard lock(mutex);
    results[rank] = weights(*net);
    evals[rank] = trainer.state().last_eval;
  });
  CHECK(close(results[0], expected));
  CHECK(identical(results[0], results[1]));
  CHECK(evals[0]["eval_loss"] == evals[1]["eval_loss"]);  // averaged over ranks
  CHECK(evals[0]["eval_loss"].get<double>() ==
        doctest::Approx(single.state().last_eval["eval_loss"].get<double>()).epsilon(1e-4));
  CHECK(evals[0]["eval_accuracy"].get<double>() ==
        doctest::Approx(single.state().last_eval["eval_accuracy"].get<double>()));
}

TEST_CASE("mixed precision is refused where there is no CUDA device") {
  train::Trainer trainer(make_net(1), {.max_steps = 1, .bf16 = true}, make_data(8));
  CHECK_THROWS_WITH_AS(trainer.train(), doctest::Contains("bf16"), tune::ConfigError);
}

TEST_CASE("a run ends with an evaluation and a checkpoint even off the step period") {
  auto dir = temp_dir("last_step");
  int reports = 0;
  train::Trainer trainer(make_net(1),
                         {.output_dir = dir,
                          .max_steps = 7,
                          .per_device_train_batch_size = 4,
                          .eval_strategy = train::Interval::kSteps,
                          .eval_steps = 5,
                          .save_steps = 5},
                         make_data(16), make_data(8, 9));
  trainer.add_callback(train::ReportCallback([&](const tune::Json& metrics, const fs::path&) {
    ++reports;
    CHECK(metrics["step"] == metrics["step"].get<int64_t>());
    CHECK(metrics.contains("eval_loss"));
  }));
  trainer.train();
  CHECK(reports == 2);  // steps 5 and 7
  CHECK(fs::exists(dir / "checkpoint-7" / "model.pt"));
  CHECK(trainer.state().last_eval["step"] == 7);
  fs::remove_all(dir);
}
