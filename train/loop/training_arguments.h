// The options of train::Trainer (train/loop/trainer.h), named and defaulted
// as Hugging Face's TrainingArguments where HF has the option.
//
//   train::TrainingArguments args{.num_train_epochs = 10, .per_device_train_batch_size = 64,
//                                 .learning_rate = 1e-3, .lr_scheduler =
//                                 train::LrSchedule::kCosine, .warmup_ratio = 0.05, .eval_strategy
//                                 = train::Interval::kEpoch, .save_strategy =
//                                 train::Interval::kEpoch};
//
// No libtorch here: sweep files and configs parse into it without it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace train {

// When to evaluate, save or log (HF's IntervalStrategy).
enum class Interval { kNo, kSteps, kEpoch };

// The learning rate over optimizer steps, after `warmup` steps rising
// linearly from 0 (HF's get_scheduler names): kConstant keeps it,
// kLinear decays it linearly to 0 at the last step, kCosine along half a
// cosine to 0.
enum class LrSchedule { kConstant, kLinear, kCosine };

enum class OptimizerKind { kAdamW, kSgd };

struct TrainingArguments {
  // Where checkpoints go outside a worker (checkpoint-<step>/ under it).
  // Empty: inside a worker, train::make_checkpoint_dir(); outside, saving
  // throws ConfigError.
  std::filesystem::path output_dir;
  // Passes over the training data. HF: 3.
  int64_t num_train_epochs = 3;
  // > 0: stop after this many optimizer steps instead (HF: -1).
  int64_t max_steps = -1;
  // Samples per forward on each rank; the global batch is this times the
  // ranks times gradient_accumulation_steps. HF: 8 and 8.
  int64_t per_device_train_batch_size = 8;
  int64_t per_device_eval_batch_size = 8;
  // Forward/backward passes whose gradients add up to one optimizer step:
  // k passes of b samples equal one of k*b (the loss is divided by k).
  int64_t gradient_accumulation_steps = 1;
  OptimizerKind optim = OptimizerKind::kAdamW;
  double learning_rate = 5e-5;  // HF's default, for fine-tuning; train from scratch with ~1e-3
  // Decoupled (AdamW) or L2 (SGD) decay of the weights of rank >= 2;
  // biases and normalisation weights are never decayed (HF's rule).
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  double sgd_momentum = 0.9;  // kSgd only
  LrSchedule lr_scheduler = LrSchedule::kLinear;
  // Warmup: warmup_steps if > 0, else ceil(warmup_ratio * total steps).
  double warmup_ratio = 0.0;
  int64_t warmup_steps = 0;
  // Clip the global gradient norm to this before each step; <= 0: never.
  double max_grad_norm = 1.0;
  // Evaluation on the eval dataset: every eval_steps optimizer steps
  // (0: logging_steps) and at the last one, or at each epoch's end. HF: kNo.
  Interval eval_strategy = Interval::kNo;
  int64_t eval_steps = 0;
  // Checkpoints (and with ReportCallback, reports): every save_steps
  // optimizer steps and at the last one, or at each epoch's end. HF: every
  // 500 steps.
  Interval save_strategy = Interval::kSteps;
  int64_t save_steps = 500;
  // Keep at most this many checkpoint-<step>/ directories in output_dir,
  // deleting the oldest after each save; the best one (with
  // load_best_model_at_end) is never deleted, so a limit of 1 may keep two.
  // 0: keep all (HF: None). Needs output_dir: inside a tuner the sweep's
  // [checkpoint] num_to_keep decides which checkpoints stay.
  int64_t save_total_limit = 0;
  // At the end of train(), load the weights of the saved checkpoint whose
  // evaluation had the best metric_for_best_model. As HF: needs
  // eval_strategy == save_strategy (by steps: save_steps a multiple of
  // eval_steps), so that every checkpoint has its evaluation; and
  // output_dir, which every rank must see.
  bool load_best_model_at_end = false;
  // An evaluation metric's name, "eval_" prefixed where missing. HF: "loss".
  std::string metric_for_best_model = "loss";
  // Unset: larger is better unless the metric is the loss (HF's rule).
  std::optional<bool> greater_is_better;
  // on_log with the mean training loss since the last log. HF: 500 steps.
  Interval logging_strategy = Interval::kSteps;
  int64_t logging_steps = 500;
  // Seeds the global generator at train() (dropout, initialisation done
  // later) and the shuffling of the training data. HF: 42.
  uint64_t seed = 42;
  // Autocast to bfloat16 / float16 (with dynamic loss scaling) on a CUDA
  // device; where libtorch has no CUDA, or the rank trains on the CPU,
  // train() throws ConfigError.
  bool bf16 = false;
  bool fp16 = false;
  // Drop each rank's last batch when smaller than the batch size.
  bool dataloader_drop_last = false;
  // Train on the CPU even when this rank was given a GPU.
  bool use_cpu = false;
};

// Names as in sweep files ("no", "steps", "epoch"; "constant", "linear",
// "cosine"; "adamw", "sgd"). Throw tune::ConfigError naming `what` and the
// names it knows.
Interval parse_interval(std::string_view name, std::string_view what = "strategy");
LrSchedule parse_lr_schedule(std::string_view name);
OptimizerKind parse_optimizer(std::string_view name);

// Throws tune::ConfigError naming the first field out of range.
void validate(const TrainingArguments& args);

// metric_for_best_model as the evaluation names it ("loss" -> "eval_loss"),
// and whether larger values of it are better.
std::string best_model_metric(const TrainingArguments& args);
bool best_model_greater_is_better(const TrainingArguments& args);

}  // namespace train
