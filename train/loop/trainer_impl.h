// The Trainer's private state and steps, shared by trainer.cpp (the loop)
// and trainer_impl.cpp (optimizer, evaluation, checkpoints). Not for users.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/optim/optimizer.h>

#include <optional>
#include <string>
#include <vector>

#include "train/loop/trainer.h"
#include "train/torch/ddp.h"

namespace train {

namespace detail {

// Cross-entropy; outputs [N, T, C] (sequences) are flattened to [N*T, C].
at::Tensor default_loss(const at::Tensor& output, const at::Tensor& target);

// fp16 training scales the loss so that small gradients survive, skips the
// steps whose gradients overflowed and halves the scale then (PyTorch's
// GradScaler defaults: 2^16, growth after 2,000 good steps).
struct LossScale {
  double scale = 65536.0;
  int64_t good_steps = 0;
};

// Autocast for the forward pass on a CUDA device. Compiled only where
// libtorch has CUDA: a CPU-only build rejects bf16/fp16 when training starts.
class AutocastScope {
 public:
  explicit AutocastScope(std::optional<at::ScalarType> dtype) : enabled_(dtype.has_value()) {
#ifdef TUNERUN_TORCH_CUDA
    if (enabled_) {
      at::autocast::set_autocast_gpu_dtype(*dtype);
      at::autocast::set_enabled(true);
    }
#endif
  }
  ~AutocastScope() {
#ifdef TUNERUN_TORCH_CUDA
    if (enabled_) {
      at::autocast::set_enabled(false);
      at::autocast::clear_cache();
    }
#endif
  }

 private:
  bool enabled_;
};

}  // namespace detail

struct Trainer::Impl {
  std::shared_ptr<torch::nn::Module> module;
  ForwardFn forward;
  LossFn loss = detail::default_loss;
  TrainingArguments args;
  TensorDataset train_data;
  std::optional<TensorDataset> eval_data;
  ComputeMetrics compute_metrics;
  std::vector<std::shared_ptr<TrainerCallback>> callbacks;
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  TrainerState state;
  TrainerControl control;

  // Set up by train().
  c10::Device device{c10::kCPU};
  std::optional<at::ScalarType> autocast;
  std::optional<detail::LossScale> loss_scale;  // fp16 only
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::shared_ptr<DistributedModel> ddp;
  std::vector<at::Tensor> parameters;
  int64_t last_saved_step = -1;
  at::Tensor loss_since_log;  // summed over optimizer steps, on the device
  int64_t steps_since_log = 0;

  int rank() const { return group ? group->getRank() : 0; }
  int world_size() const { return group ? group->getSize() : 1; }

  void set_up_device();
  void build_optimizer();
  void zero_grad();
  bool optimizer_step(double lr);  // false: skipped (fp16 overflow)
  // Sums `values` over ranks and divides by the world size.
  std::vector<double> mean_over_ranks(std::vector<double> values) const;
  void log();
  tune::Json evaluate();
  void save();
  // Records `dir` as the best checkpoint if its evaluation beats the best.
  void track_best(const std::filesystem::path& dir);
  // Deletes the oldest checkpoints beyond save_total_limit (rank 0).
  void rotate_checkpoints() const;
  void load(const std::filesystem::path& dir);
  void load_model(const std::filesystem::path& dir);
  void act_on_control();

  template <typename Hook>
  void each(Hook hook) {
    for (auto& callback : callbacks) hook(*callback);
  }
};

}  // namespace train
