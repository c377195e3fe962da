#include "train/loop/training_arguments.h"

#include <string>

#include "core/errors.h"

namespace train {

namespace {

[[noreturn]] void unknown(std::string_view what, std::string_view name, std::string_view known) {
  throw tune::ConfigError(std::string(what) + ": unknown value '" + std::string(name) +
                          "' (known: " + std::string(known) + ")");
}

void require(bool ok, std::string_view field, const std::string& why) {
  if (!ok) throw tune::ConfigError("TrainingArguments." + std::string(field) + ": " + why);
}

}  // namespace

Interval parse_interval(std::string_view name, std::string_view what) {
  if (name == "no") return Interval::kNo;
  if (name == "steps") return Interval::kSteps;
  if (name == "epoch") return Interval::kEpoch;
  unknown(what, name, "no, steps, epoch");
}

LrSchedule parse_lr_schedule(std::string_view name) {
  if (name == "constant") return LrSchedule::kConstant;
  if (name == "linear") return LrSchedule::kLinear;
  if (name == "cosine") return LrSchedule::kCosine;
  unknown("lr_scheduler", name, "constant, linear, cosine");
}

OptimizerKind parse_optimizer(std::string_view name) {
  if (name == "adamw") return OptimizerKind::kAdamW;
  if (name == "sgd") return OptimizerKind::kSgd;
  unknown("optim", name, "adamw, sgd");
}

void validate(const TrainingArguments& a) {
  require(a.max_steps > 0 || a.num_train_epochs > 0, "num_train_epochs",
          "must be >= 1 when max_steps is not set");
  require(a.per_device_train_batch_size >= 1, "per_device_train_batch_size", "must be >= 1");
  require(a.per_device_eval_batch_size >= 1, "per_device_eval_batch_size", "must be >= 1");
  require(a.gradient_accumulation_steps >= 1, "gradient_accumulation_steps", "must be >= 1");
  require(a.learning_rate >= 0, "learning_rate", "must be >= 0");
  require(a.weight_decay >= 0, "weight_decay", "must be >= 0");
  require(a.warmup_ratio >= 0 && a.warmup_ratio <= 1, "warmup_ratio", "must be in [0, 1]");
  require(a.warmup_steps >= 0, "warmup_steps", "must be >= 0");
  require(a.eval_strategy != Interval::kSteps || a.eval_steps > 0 || a.logging_steps > 0,
          "eval_steps", "must be >= 1 with eval_strategy steps");
  require(a.save_strategy != Interval::kSteps || a.save_steps > 0, "save_steps",
          "must be >= 1 with save_strategy steps");
  require(a.logging_strategy != Interval::kSteps || a.logging_steps > 0, "logging_steps",
          "must be >= 1 with logging_strategy steps");
  require(!(a.bf16 && a.fp16), "bf16", "bf16 and fp16 exclude each other");
  require(a.save_total_limit >= 0, "save_total_limit", "must be >= 0 (0: keep all)");
  require(a.save_total_limit == 0 || !a.output_dir.empty(), "save_total_limit",
          "needs output_dir (inside a tuner, the sweep's [checkpoint] num_to_keep applies)");
  if (a.load_best_model_at_end) {
    require(!a.output_dir.empty(), "load_best_model_at_end", "needs output_dir");
    require(a.eval_strategy != Interval::kNo && a.eval_strategy == a.save_strategy,
            "load_best_model_at_end", "needs eval_strategy and save_strategy to be the same");
    const int64_t eval_every = a.eval_steps > 0 ? a.eval_steps : a.logging_steps;
    require(a.save_strategy != Interval::kSteps || a.save_steps % eval_every == 0,
            "load_best_model_at_end",
            "needs save_steps (" + std::to_string(a.save_steps) +
                ") to be a multiple of eval_steps (" + std::to_string(eval_every) + ")");
    require(!a.metric_for_best_model.empty(), "metric_for_best_model", "must name a metric");
  }
}

std::string best_model_metric(const TrainingArguments& args) {
  const std::string& name = args.metric_for_best_model;
  return name.starts_with("eval_") ? name : "eval_" + name;
}

bool best_model_greater_is_better(const TrainingArguments& args) {
  return args.greater_is_better.value_or(best_model_metric(args) != "eval_loss");
}

}  // namespace train
