// TorchTrainer: a data-parallel training job, as Ray Train's TorchTrainer.
//
//   void train_func(const tune::Config& config) {
//     auto model = train::prepare_model(std::make_shared<Net>());  // DDP (train/torch/ddp.h)
//     ... for each epoch: train, then train::report({{"loss", l}}, checkpoint_dir);
//   }
//
//   int main() {
//     train::TorchTrainer trainer("mnist", train_func, {.num_workers = 2},
//                                 {{"lr", 0.05}, {"epochs", 10}});
//     tune::Result result = trainer.fit();            // one job, or as a Tuner's trainable:
//     tune::Tuner tuner(trainer, {{"lr", tune::loguniform(1e-3, 0.1)}}, {...});
//   }
//
// Each rank is a process of this same program (tune/tuner.h states the one
// rule that follows); ranks meet in a c10d store that rank 0 hosts at
// MASTER_ADDR:MASTER_PORT, which the controller picks per job, and get
// torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, ...).
//
// The config a rank sees is train_loop_config with the trial's sampled keys
// laid over it (a JSON merge patch), so a Tuner searches any of its keys and
// keeps the rest. This type does not include libtorch: train_func does.
#pragma once

#include <string>

#include "train/trainable.h"
#include "tune/result_grid.h"
#include "tune/trainer/scaling_config.h"
#include "tune/tuner.h"

namespace train {

class TorchTrainer {
 public:
  // Throws tune::ConfigError for an invalid scaling config, an empty name or
  // no function, or a train_loop_config that is not a JSON object.
  TorchTrainer(std::string name, TrainFunc train_func, ScalingConfig scaling = {},
               tune::Json train_loop_config = tune::Json::object(),
               tune::RunConfig run_config = {});

  // Runs one training job (an experiment of one trial named after the
  // trainer, in run_config's storage) and returns its result. In a worker
  // process it runs train_func and exits instead. Throws tune::TrialError
  // when the job ends in ERROR (after run_config's max_failures restarts).
  tune::Result fit() const;

  // The trainable a tune::Tuner runs: every trial is one such job.
  operator tune::Trainable() const;  // NOLINT: Tuner(trainer, ...) reads as Ray's

  const ScalingConfig& scaling_config() const { return scaling_; }
  const tune::Json& train_loop_config() const { return train_loop_config_; }

 private:
  std::string name_;
  TrainFunc func_;
  ScalingConfig scaling_;
  tune::Json train_loop_config_;
  tune::RunConfig run_config_;
};

}  // namespace train
