// Trainer callbacks, as Hugging Face's TrainerCallback: hooks that see the
// arguments, the trainer's state and a control object through which they
// ask the loop to stop, evaluate or save.
//
// Order per optimizer step: on_step_end; then, as the strategies or the
// control ask, on_log, evaluation (on_evaluate), saving (on_save). Per
// epoch: on_epoch_begin, the steps, on_epoch_end, then evaluation and saving
// for kEpoch strategies. Callbacks run in the order they were added.
//
// Every rank runs every hook. A callback that sets control flags must decide
// the same on every rank (the loop's metrics are already averaged over
// ranks, so deciding from them is safe); otherwise ranks diverge and the
// next collective hangs until its timeout.
//
// No libtorch here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/config.h"
#include "train/loop/training_arguments.h"

namespace train {

struct TrainerState {
  int64_t global_step = 0;  // optimizer steps taken
  int64_t max_steps = 0;
  double epoch = 0.0;  // fractional: 1.5 is half-way through the second epoch
  int64_t num_train_epochs = 0;
  int world_rank = 0;
  int world_size = 1;
  tune::Json last_eval;  // the latest evaluation's metrics ("eval_loss"...), null before one
  tune::Json last_log;   // the latest on_log entry ("loss", "learning_rate", "epoch")
  std::vector<tune::Json> log_history;  // every log and evaluation, in order
  // Under load_best_model_at_end: the best metric_for_best_model a saved
  // checkpoint had, and that checkpoint's directory.
  std::optional<double> best_metric;
  std::filesystem::path best_model_checkpoint;
};

// Flags callbacks set; the loop resets should_save/should_evaluate/should_log
// after acting on them.
struct TrainerControl {
  bool should_training_stop = false;
  bool should_epoch_stop = false;
  bool should_save = false;
  bool should_evaluate = false;
  bool should_log = false;
};

class TrainerCallback {
 public:
  virtual ~TrainerCallback() = default;
  virtual void on_train_begin(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_train_end(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_epoch_begin(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_epoch_end(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_step_end(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  // `metrics` may be extended (a derived metric) for the callbacks after.
  virtual void on_evaluate(const TrainingArguments&, TrainerState&, TrainerControl&,
                           tune::Json& /*metrics*/) {}
  // `checkpoint` is this rank's directory of the checkpoint just written.
  virtual void on_save(const TrainingArguments&, TrainerState&, TrainerControl&,
                       const std::filesystem::path& /*checkpoint*/) {}
  virtual void on_log(const TrainerState&, const tune::Json& /*logs*/) {}

  // State that must survive a resume (HF's ExportableState), stored in the
  // checkpoint under the callback's name. Empty name: nothing stored.
  virtual std::string state_name() const { return {}; }
  virtual tune::Json state() const { return nullptr; }
  virtual void load_state(const tune::Json&) {}
};

// Stops training when `metric` has not improved by more than `threshold`
// for `patience` evaluations in a row (HF's EarlyStoppingCallback). Its
// counter is part of the checkpoint.
struct EarlyStoppingOptions {
  std::string metric = "eval_loss";
  bool greater_is_better = false;
  int64_t patience = 1;
  double threshold = 0.0;
};

class EarlyStoppingCallback : public TrainerCallback {
 public:
  explicit EarlyStoppingCallback(EarlyStoppingOptions options = {})
      : options_(std::move(options)) {}
  // Throws tune::ConfigError when the evaluation lacks the metric.
  void on_evaluate(const TrainingArguments&, TrainerState&, TrainerControl& control,
                   tune::Json& metrics) override;
  std::string state_name() const override { return "early_stopping"; }
  tune::Json state() const override;
  void load_state(const tune::Json& state) override;

  int64_t evaluations_without_improvement() const { return bad_evaluations_; }

 private:
  EarlyStoppingOptions options_;
  std::optional<double> best_;
  int64_t bad_evaluations_ = 0;
};

// Ray Train's RayTrainReportCallback: at every save, train::report() of the
// latest evaluation metrics (else the latest logged loss) plus "epoch" and
// "step", with the checkpoint just saved, so that ASHA and PBT act on it
// and restored trials resume from it. Every rank reports (the checkpoint
// merges ranks' files); the metrics are already averaged over ranks.
class ReportCallback : public TrainerCallback {
 public:
  using ReportFn =
      std::function<void(const tune::Json& metrics, const std::filesystem::path& checkpoint)>;
  // `report` replaces train::report (tests, or a report outside a worker).
  explicit ReportCallback(ReportFn report = {}) : report_(std::move(report)) {}
  void on_save(const TrainingArguments&, TrainerState& state, TrainerControl&,
               const std::filesystem::path& checkpoint) override;

  // The metrics the next report would carry.
  static tune::Json metrics_of(const TrainerState& state);

 private:
  ReportFn report_;
};

}  // namespace train
