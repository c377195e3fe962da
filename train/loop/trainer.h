// train::Trainer: the training loop users would otherwise write by hand,
// with Hugging Face Trainer's options (TrainingArguments) and callbacks.
//
//   auto model = std::make_shared<Net>();                  // any module with forward(Tensor)
//   train::Trainer trainer(model, args, train_data, eval_data, compute_metrics);
//   trainer.add_callback(train::ReportCallback{});         // report + checkpoint at every save
//   trainer = train::prepare_trainer(std::move(trainer));  // data-parallel over the trial's ranks
//   trainer.train();                                       // resumes from train::get_checkpoint()
//
// The loss: by default cross-entropy of forward(data) against target, with
// sequence outputs [N, T, C] flattened to [N*T, C] (a language model);
// set_loss replaces it.
//
// Checkpoints (checkpoint-<step>/ under output_dir, or a directory from
// train::make_checkpoint_dir() in a worker): model.pt and optimizer.pt
// (torch archives), rng_state_<rank>.pt (each rank's CPU generator) and
// trainer_state.json (step, epoch, callbacks' states). The learning-rate
// schedule's state is the step. A run resumed from one continues the same
// trajectory: on the CPU, bit for bit (tests/train/loop). Rank 0 writes all
// but its peers' generator states.
//
// Thread safety: one thread drives a Trainer; its module must not be
// trained elsewhere meanwhile.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "core/config.h"
#include "train/loop/callbacks.h"
#include "train/loop/training_arguments.h"
#include "train/torch/data.h"

namespace torch::nn {
class Module;
}

namespace train {

// What compute_metrics sees after an evaluation on this rank's shard:
// the concatenated model outputs and targets, and the mean loss.
struct EvalPrediction {
  at::Tensor predictions;
  at::Tensor label_ids;
  double loss = 0.0;
};

// Returns metrics (numbers) that the Trainer prefixes with "eval_" and
// averages over ranks.
using ComputeMetrics = std::function<tune::Json(const EvalPrediction&)>;
using ForwardFn = std::function<at::Tensor(const at::Tensor& data)>;
using LossFn = std::function<at::Tensor(const at::Tensor& output, const at::Tensor& target)>;

// compute_metrics for classifiers: {"accuracy": argmax matches / samples}.
tune::Json accuracy_metrics(const EvalPrediction& prediction);

class Trainer {
 public:
  // `model` is any module with `at::Tensor forward(at::Tensor)`. `eval`
  // may be empty (no evaluation). Throws tune::ConfigError for invalid
  // arguments.
  template <typename Module>
  Trainer(std::shared_ptr<Module> model, TrainingArguments args, TensorDataset train,
          std::optional<TensorDataset> eval = std::nullopt, ComputeMetrics compute_metrics = {})
      : Trainer(
            model, [model](const at::Tensor& x) { return model->forward(x); }, std::move(args),
            std::move(train), std::move(eval), std::move(compute_metrics)) {}

  Trainer(std::shared_ptr<torch::nn::Module> module, ForwardFn forward, TrainingArguments args,
          TensorDataset train, std::optional<TensorDataset> eval = std::nullopt,
          ComputeMetrics compute_metrics = {});
  ~Trainer();
  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;

  template <typename Callback>
  void add_callback(Callback callback) {
    add_callback(std::shared_ptr<TrainerCallback>(std::make_shared<Callback>(std::move(callback))));
  }
  // Keep the pointer to read a callback's state after training.
  template <typename Callback>
  void add_callback(std::shared_ptr<Callback> callback) {
    add_callback(std::shared_ptr<TrainerCallback>(std::move(callback)));
  }
  void add_callback(std::shared_ptr<TrainerCallback> callback);
  void set_loss(LossFn loss);

  // Trains data-parallel over `group`'s ranks (what prepare_trainer does):
  // each rank takes its shard of the data, gradients and metrics are
  // averaged. nullptr: this rank alone.
  void set_process_group(c10::intrusive_ptr<c10d::ProcessGroup> group);

  // Runs the loop to num_train_epochs or max_steps (or until a callback
  // stops it). Resumes from `resume_from` if given; else inside a worker from
  // train::get_checkpoint(), if any. Throws tune::StorageError for an
  // unreadable checkpoint; what report() throws to stop a trial passes through.
  void train(std::optional<std::filesystem::path> resume_from = std::nullopt);

  // Evaluates on the eval dataset (all ranks call it): {"eval_loss", and
  // "eval_<metric>" per compute_metrics}, averaged over ranks. Runs the
  // on_evaluate callbacks. Throws tune::ConfigError without an eval dataset.
  tune::Json evaluate();

  const TrainerState& state() const;
  const TrainingArguments& args() const;
  torch::nn::Module& model();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace train
