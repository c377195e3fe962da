#include "tune/trainer/torch_trainer.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "tune/spec/validation.h"

namespace train {

void ScalingConfig::validate() const {
  if (resources_per_worker.gpus > 0 && !use_gpu) {
    throw tune::ConfigError::at_key(
        "scaling_config.resources_per_worker.gpus",
        "ScalingConfig.resources_per_worker.gpus asks for GPUs but use_gpu "
        "is false");
  }
  tune::validate_resources(resources(), "scaling_config");
}

TorchTrainer::TorchTrainer(std::string name, TrainFunc train_func, ScalingConfig scaling,
                           tune::Json train_loop_config, tune::RunConfig run_config)
    : name_(std::move(name)),
      func_(std::move(train_func)),
      scaling_(scaling),
      train_loop_config_(std::move(train_loop_config)),
      run_config_(std::move(run_config)) {
  if (name_.empty()) throw tune::ConfigError::at_key("name", "TorchTrainer needs a name");
  if (!func_) throw tune::ConfigError::at_key("train_func", "TorchTrainer needs a train function");
  if (train_loop_config_.is_null()) train_loop_config_ = tune::Json::object();
  if (!train_loop_config_.is_object()) {
    throw tune::ConfigError::at_key("train_loop_config", "train_loop_config must be a JSON object");
  }
  scaling_.validate();
}

TorchTrainer::operator tune::Trainable() const {
  tune::Trainable t;
  t.name = name_;
  const tune::Resources r = scaling_.resources();
  t.num_workers = r.num_workers;
  t.cpus_per_worker = r.cpus_per_worker;
  t.gpus_per_worker = r.gpus_per_worker;
  t.threads_per_worker = r.threads_per_worker;
  t.placement_strategy = r.placement_strategy;
  t.min_workers = r.min_workers;
  t.func = [func = func_, base = train_loop_config_](const tune::Config& config) {
    tune::Json merged = base;
    merged.merge_patch(config.json());
    func(tune::Config(std::move(merged)));
  };
  return t;
}

tune::Result TorchTrainer::fit() const {
  // One trial whose config is train_loop_config itself, so the database holds it.
  tune::ParamSpace space;
  for (const auto& [key, value] : train_loop_config_.items()) space.set(key, value);
  tune::RunConfig run_config = run_config_;
  if (run_config.name.empty()) run_config.name = name_;
  tune::Tuner tuner(*this, std::move(space), tune::TuneConfig{.num_samples = 1},
                    std::move(run_config));
  const tune::ResultGrid grid = tuner.fit();
  if (grid.size() != 1) {
    throw tune::TrialError(
        fmt::format("training job {} ran {} trials, expected 1", name_, grid.size()));
  }
  const tune::Result& result = grid[0];
  if (result.error) {
    throw tune::TrialError(fmt::format("training job {} failed: {}", name_, *result.error));
  }
  return result;
}

}  // namespace train
