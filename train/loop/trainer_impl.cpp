#include "train/loop/trainer_impl.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/errors.h"
#include "train/checkpoint.h"
#include "train/session.h"
#include "train/torch/device.h"

namespace train {

namespace detail {

at::Tensor default_loss(const at::Tensor& output, const at::Tensor& target) {
  namespace F = torch::nn::functional;
  if (output.dim() > 2) {
    return F::cross_entropy(output.reshape({-1, output.size(-1)}), target.reshape(-1));
  }
  return F::cross_entropy(output, target);
}

}  // namespace detail

namespace {

std::filesystem::path rng_file(const std::filesystem::path& dir, int rank) {
  return dir / ("rng_state_" + std::to_string(rank) + ".pt");
}

}  // namespace

void Trainer::Impl::set_up_device() {
  device = args.use_cpu ? c10::Device(c10::kCPU) : get_device();
  if (args.bf16 || args.fp16) {
#ifdef TUNERUN_TORCH_CUDA
    if (!device.is_cuda()) {
      throw tune::ConfigError(
          "TrainingArguments.bf16/fp16: autocast needs a CUDA device; "
          "this rank trains on the CPU");
    }
    autocast = args.bf16 ? at::kBFloat16 : at::kHalf;
    if (args.fp16) loss_scale = detail::LossScale{};
#else
    throw tune::ConfigError(
        "TrainingArguments.bf16/fp16: this libtorch has no CUDA; mixed "
        "precision runs only on a CUDA device");
#endif
  }
  module->to(device);
  parameters.clear();
  for (const auto& p : module->parameters()) {
    if (p.requires_grad()) parameters.push_back(p);
  }
}

// Weights of rank >= 2 decay; biases and normalisation weights do not (HF's
// get_decay_parameter_names, by shape rather than by layer type).
void Trainer::Impl::build_optimizer() {
  std::vector<at::Tensor> decay, no_decay;
  for (const auto& p : parameters) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto add = [&](std::vector<at::Tensor>& params, double weight_decay) {
    if (params.empty()) return;
    std::unique_ptr<torch::optim::OptimizerOptions> options;
    if (args.optim == OptimizerKind::kAdamW) {
      options = std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(args.learning_rate)
              .betas({args.adam_beta1, args.adam_beta2})
              .eps(args.adam_epsilon)
              .weight_decay(weight_decay));
    } else {
      options =
          std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(args.learning_rate)
                                                         .momentum(args.sgd_momentum)
                                                         .weight_decay(weight_decay));
    }
    groups.emplace_back(std::move(params), std::move(options));
  };
  add(decay, args.weight_decay);
  add(no_decay, 0.0);
  if (args.optim == OptimizerKind::kAdamW) {
    optimizer = std::make_unique<torch::optim::AdamW>(
        std::move(groups), torch::optim::AdamWOptions(args.learning_rate));
  } else {
    optimizer = std::make_unique<torch::optim::SGD>(std::move(groups),
                                                    torch::optim::SGDOptions(args.learning_rate));
  }
}

void Trainer::Impl::zero_grad() {
  if (ddp) {
    ddp->zero_grad();  // gradients are views into its buckets: zeroed in place
  } else {
    optimizer->zero_grad();
  }
}

bool Trainer::Impl::optimizer_step(double lr) {
  if (loss_scale) {
    torch::NoGradGuard no_grad;
    at::Tensor sum = at::zeros({}, at::TensorOptions(device).dtype(at::kFloat));
    for (auto& p : parameters) {
      if (!p.grad().defined()) continue;
      p.grad().mul_(1.0 / loss_scale->scale);
      sum += p.grad().sum().to(at::kFloat);
    }
    // Overflowed gradients (inf or nan) make the sum non-finite; the
    // gradients were averaged over ranks, so every rank decides the same.
    if (!std::isfinite(sum.item<double>())) {
      loss_scale->scale /= 2;
      loss_scale->good_steps = 0;
      return false;
    }
    if (++loss_scale->good_steps == 2000) {
      loss_scale->scale *= 2;
      loss_scale->good_steps = 0;
    }
  }
  if (args.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(parameters, args.max_grad_norm);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);
  optimizer->step();
  return true;
}

std::vector<double> Trainer::Impl::mean_over_ranks(std::vector<double> values) const {
  if (!group || values.empty()) return values;
  std::vector<at::Tensor> tensors{at::tensor(values, at::kDouble)};
  group->allreduce(tensors)->wait();
  const double* sums = tensors[0].data_ptr<double>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = sums[i] / world_size();
  return values;
}

void Trainer::Impl::log() {
  const double local = steps_since_log > 0
                           ? loss_since_log.item<double>() / static_cast<double>(steps_since_log)
                           : 0.0;
  const double loss = mean_over_ranks({local})[0];
  tune::Json logs = {{"loss", loss},
                     {"learning_rate", optimizer->param_groups()[0].options().get_lr()},
                     {"epoch", state.epoch},
                     {"step", state.global_step}};
  loss_since_log = at::zeros({}, at::TensorOptions(device).dtype(at::kDouble));
  steps_since_log = 0;
  state.last_log = logs;
  state.log_history.push_back(logs);
  each([&](TrainerCallback& c) { c.on_log(state, logs); });
}

tune::Json Trainer::Impl::evaluate() {
  if (!eval_data) throw tune::ConfigError("Trainer::evaluate: no eval dataset was given");
  auto loader = prepare_data_loader(
      *eval_data, args.per_device_eval_batch_size,
      {.sampler = {.rank = rank(), .num_replicas = world_size(), .shuffle = false}});
  torch::NoGradGuard no_grad;
  detail::AutocastScope autocast_scope(autocast);
  module->eval();
  double loss_sum = 0.0;
  int64_t samples = 0;
  std::vector<at::Tensor> outputs, targets;
  for (const Batch& batch : loader) {
    at::Tensor output = forward(batch.data.to(device));
    at::Tensor target = batch.target.to(device);
    loss_sum += loss(output, target).item<double>() * static_cast<double>(batch.data.size(0));
    samples += batch.data.size(0);
    if (compute_metrics) {
      outputs.push_back(output.to(at::kCPU, at::kFloat));
      targets.push_back(batch.target);
    }
  }
  module->train();
  EvalPrediction prediction{.loss = samples > 0 ? loss_sum / static_cast<double>(samples) : 0.0};
  std::vector<std::string> names{"eval_loss"};
  std::vector<double> values{prediction.loss};
  if (compute_metrics) {
    prediction.predictions = at::cat(outputs);
    prediction.label_ids = at::cat(targets);
    const tune::Json computed = compute_metrics(prediction);
    for (auto it = computed.begin(); it != computed.end(); ++it) {
      if (!it.value().is_number()) {
        throw tune::ConfigError("compute_metrics: metric '" + it.key() + "' is not a number");
      }
      names.push_back("eval_" + it.key());
      values.push_back(it.value().get<double>());
    }
  }
  values = mean_over_ranks(std::move(values));
  tune::Json metrics = tune::Json::object();
  for (size_t i = 0; i < names.size(); ++i) metrics[names[i]] = values[i];
  metrics["epoch"] = state.epoch;
  metrics["step"] = state.global_step;
  each([&](TrainerCallback& c) { c.on_evaluate(args, state, control, metrics); });
  state.last_eval = metrics;
  state.log_history.push_back(metrics);
  return metrics;
}

void Trainer::Impl::save() {
  if (last_saved_step == state.global_step) return;
  last_saved_step = state.global_step;
  std::filesystem::path dir;
  if (!args.output_dir.empty()) {
    dir = args.output_dir / ("checkpoint-" + std::to_string(state.global_step));
    std::filesystem::create_directories(dir);
  } else if (in_worker()) {
    dir = make_checkpoint_dir();
  } else {
    throw tune::ConfigError(
        "Trainer: saving a checkpoint outside a worker needs TrainingArguments.output_dir");
  }
  if (args.load_best_model_at_end) track_best(dir);
  {
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares the state
    std::lock_guard lock(generator.mutex());
    torch::save(generator.get_state(), rng_file(dir, rank()).string());
  }
  if (rank() == 0) {
    torch::serialize::OutputArchive archive;
    module->save(archive);
    archive.save_to((dir / "model.pt").string());
    torch::save(*optimizer, (dir / "optimizer.pt").string());
    tune::Json callback_states = tune::Json::object();
    for (const auto& c : callbacks) {
      if (!c->state_name().empty()) callback_states[c->state_name()] = c->state();
    }
    tune::Json trainer_state = {{"global_step", state.global_step},
                                {"epoch", state.epoch},
                                {"last_eval", state.last_eval},
                                {"last_log", state.last_log},
                                {"callbacks", callback_states}};
    if (state.best_metric) {
      trainer_state["best_metric"] = *state.best_metric;
      trainer_state["best_model_checkpoint"] = state.best_model_checkpoint.string();
    }
    std::ofstream out(dir / "trainer_state.json");
    out << trainer_state.dump(1) << "\n";
    if (!out.flush()) {
      throw tune::StorageError((dir / "trainer_state.json").string() + ": write failed");
    }
    if (args.save_total_limit > 0) rotate_checkpoints();
  }
  each([&](TrainerCallback& c) { c.on_save(args, state, control, dir); });
}

void Trainer::Impl::track_best(const std::filesystem::path& dir) {
  const std::string name = best_model_metric(args);
  const tune::Json& eval = state.last_eval;
  if (!eval.is_object() || !eval.contains(name) || !eval.at(name).is_number()) {
    throw tune::ConfigError(
        "TrainingArguments.metric_for_best_model: the evaluation has no numeric metric '" + name +
        "' (it has " + eval.dump() + ")");
  }
  const double value = eval.at(name).get<double>();
  const bool better =
      !state.best_metric || (best_model_greater_is_better(args) ? value > *state.best_metric
                                                                : value < *state.best_metric);
  if (better) {
    state.best_metric = value;
    state.best_model_checkpoint = dir;
  }
}

// HF's _rotate_checkpoints: by step, oldest first, the best moved last.
void Trainer::Impl::rotate_checkpoints() const {
  namespace fs = std::filesystem;
  std::vector<std::pair<int64_t, fs::path>> found;
  try {
    for (const auto& entry : fs::directory_iterator(args.output_dir)) {
      const std::string name = entry.path().filename().string();
      constexpr std::string_view kPrefix = "checkpoint-";
      if (!entry.is_directory() || !name.starts_with(kPrefix) || name.size() == kPrefix.size() ||
          name.find_first_not_of("0123456789", kPrefix.size()) != std::string::npos) {
        continue;
      }
      found.emplace_back(std::stoll(name.substr(kPrefix.size())), entry.path());
    }
    std::sort(found.begin(), found.end());
    auto best = std::find_if(found.begin(), found.end(), [&](const auto& c) {
      return c.second == state.best_model_checkpoint;
    });
    // A limit of 1 keeps the last checkpoint too, to resume from.
    size_t keep = static_cast<size_t>(args.save_total_limit);
    if (keep == 1 && best != found.end() && best + 1 != found.end()) keep = 2;
    if (best != found.end()) std::rotate(best, best + 1, found.end());
    for (size_t i = 0; i + keep < found.size(); ++i) fs::remove_all(found[i].second);
  } catch (const fs::filesystem_error& e) {
    throw tune::StorageError(args.output_dir.string() +
                             ": rotating checkpoints (save_total_limit " +
                             std::to_string(args.save_total_limit) + "): " + e.what());
  }
}

void Trainer::Impl::load_model(const std::filesystem::path& dir) {
  torch::serialize::InputArchive archive;
  archive.load_from((dir / "model.pt").string(), device);
  module->load(archive);
}

// Before prepare_model: rank 0's loaded weights are what it broadcasts.
void Trainer::Impl::load(const std::filesystem::path& dir) {
  try {
    std::ifstream in(dir / "trainer_state.json");
    if (!in) throw tune::StorageError("cannot open trainer_state.json");
    const tune::Json saved = tune::Json::parse(in);
    state.global_step = saved.at("global_step").get<int64_t>();
    state.epoch = saved.at("epoch").get<double>();
    state.last_eval = saved.value("last_eval", tune::Json());
    state.last_log = saved.value("last_log", tune::Json());
    const tune::Json& callback_states = saved.at("callbacks");
    for (const auto& c : callbacks) {
      auto it = callback_states.find(c->state_name());
      if (!c->state_name().empty() && it != callback_states.end()) c->load_state(*it);
    }
    if (saved.contains("best_metric")) {
      state.best_metric = saved.at("best_metric").get<double>();
      state.best_model_checkpoint = saved.at("best_model_checkpoint").get<std::string>();
    }
    load_model(dir);
    torch::load(*optimizer, (dir / "optimizer.pt").string(), device);
    // A rank without its own generator state (the world grew) keeps its seed.
    if (std::filesystem::exists(rng_file(dir, rank()))) {
      at::Tensor rng;
      torch::load(rng, rng_file(dir, rank()).string());
      at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares the state
      std::lock_guard lock(generator.mutex());
      generator.set_state(rng);
    }
  } catch (const tune::StorageError& e) {
    throw tune::StorageError(dir.string() + ": unreadable checkpoint: " + e.what());
  } catch (const std::exception& e) {
    throw tune::StorageError(dir.string() + ": unreadable checkpoint: " + e.what());
  }
  last_saved_step = state.global_step;
}

void Trainer::Impl::act_on_control() {
  if (control.should_log) log();
  if (control.should_evaluate && eval_data) evaluate();
  if (control.should_save) save();
  control.should_log = control.should_evaluate = control.should_save = false;
}

}  // namespace train
