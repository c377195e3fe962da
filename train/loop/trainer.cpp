#include "train/loop/trainer.h"

#include <torch/nn/module.h>

#include "core/errors.h"
#include "train/checkpoint.h"
#include "train/loop/lr_schedule.h"
#include "train/loop/trainer_impl.h"
#include "train/session.h"

namespace train {

tune::Json accuracy_metrics(const EvalPrediction& prediction) {
  const auto total = prediction.label_ids.numel();
  const auto correct =
      prediction.predictions.argmax(-1).eq(prediction.label_ids).sum().item<int64_t>();
  return {
      {"accuracy", total > 0 ? static_cast<double>(correct) / static_cast<double>(total) : 0.0}};
}

Trainer::Trainer(std::shared_ptr<torch::nn::Module> module, ForwardFn forward,
                 TrainingArguments args, TensorDataset train, std::optional<TensorDataset> eval,
                 ComputeMetrics compute_metrics)
    : impl_(std::make_unique<Impl>()) {
  validate(args);
  if (!module || !forward) throw tune::ConfigError("Trainer: no model");
  if (!train.data.defined() || train.size() == 0 || !train.target.defined()) {
    throw tune::ConfigError("Trainer: the training dataset is empty or has no targets");
  }
  impl_->module = std::move(module);
  impl_->forward = std::move(forward);
  impl_->args = std::move(args);
  impl_->train_data = std::move(train);
  impl_->eval_data = std::move(eval);
  impl_->compute_metrics = std::move(compute_metrics);
}

Trainer::~Trainer() = default;
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;

void Trainer::add_callback(std::shared_ptr<TrainerCallback> callback) {
  impl_->callbacks.push_back(std::move(callback));
}
void Trainer::set_loss(LossFn loss) { impl_->loss = std::move(loss); }
void Trainer::set_process_group(c10::intrusive_ptr<c10d::ProcessGroup> group) {
  impl_->group = std::move(group);
}
const TrainerState& Trainer::state() const { return impl_->state; }
const TrainingArguments& Trainer::args() const { return impl_->args; }
torch::nn::Module& Trainer::model() { return *impl_->module; }

tune::Json Trainer::evaluate() {
  if (impl_->parameters.empty()) impl_->set_up_device();
  return impl_->evaluate();
}

void Trainer::train(std::optional<std::filesystem::path> resume_from) {
  Impl& m = *impl_;
  const TrainingArguments& args = m.args;
  if (!resume_from && in_worker()) {
    if (auto checkpoint = get_checkpoint()) resume_from = checkpoint->path();
  }
  torch::manual_seed(args.seed);
  m.set_up_device();
  m.build_optimizer();
  m.state = TrainerState{.world_rank = m.rank(), .world_size = m.world_size()};
  m.control = TrainerControl{};
  m.last_saved_step = -1;
  if (resume_from) m.load(*resume_from);
  // Released however train() ends (a stop unwinds through report()).
  struct Release {
    Impl& m;
    ~Release() {
      if (m.ddp) release_model(*m.module);
      m.ddp.reset();
    }
  } release{m};
  if (m.group) {
    m.ddp = prepare_model(*m.module, {.process_group = m.group});
  } else {
    keep_freed_memory();
  }

  LoaderOptions loader_options{
      .sampler = {.rank = m.rank(), .num_replicas = m.world_size(), .seed = args.seed},
      .drop_last_batch = args.dataloader_drop_last};
  auto loader = prepare_data_loader(m.train_data, args.per_device_train_batch_size, loader_options);
  const int64_t batches = loader.num_batches();
  const int64_t k = args.gradient_accumulation_steps;
  const int64_t steps_per_epoch = std::max<int64_t>(1, (batches + k - 1) / k);
  const int64_t max_steps =
      args.max_steps > 0 ? args.max_steps : args.num_train_epochs * steps_per_epoch;
  const int64_t epochs = (max_steps + steps_per_epoch - 1) / steps_per_epoch;
  const LrScheduler scheduler(args.lr_scheduler, args.learning_rate,
                              warmup_steps_for(args, max_steps), max_steps);
  m.state.max_steps = max_steps;
  m.state.num_train_epochs = epochs;
  m.loss_since_log = at::zeros({}, at::TensorOptions(m.device).dtype(at::kDouble));
  m.steps_since_log = 0;
  const int64_t eval_every = args.eval_steps > 0 ? args.eval_steps : args.logging_steps;

  m.each([&](TrainerCallback& c) { c.on_train_begin(args, m.state, m.control); });
  const detail::AutocastScope autocast_scope(m.autocast);
  for (int64_t epoch = m.state.global_step / steps_per_epoch;
       epoch < epochs && m.state.global_step < max_steps && !m.control.should_training_stop;
       ++epoch) {
    loader.set_epoch(epoch);
    m.control.should_epoch_stop = false;
    m.each([&](TrainerCallback& c) { c.on_epoch_begin(args, m.state, m.control); });
    // A resumed run skips the batches its checkpoint had consumed (without
    // gathering them: the iterator reads a batch only when dereferenced).
    int64_t b = (m.state.global_step - epoch * steps_per_epoch) * k;
    auto it = loader.begin();
    for (int64_t i = 0; i < b; ++i) ++it;
    while (b < batches && m.state.global_step < max_steps && !m.control.should_training_stop &&
           !m.control.should_epoch_stop) {
      const int64_t micro_batches = std::min(k, batches - b);
      m.zero_grad();
      at::Tensor step_loss = at::zeros({}, at::TensorOptions(m.device).dtype(at::kDouble));
      for (int64_t j = 0; j < micro_batches; ++j, ++b, ++it) {
        const Batch batch = *it;
        at::Tensor loss = m.loss(m.forward(batch.data.to(m.device)), batch.target.to(m.device));
        at::Tensor scaled = micro_batches > 1 ? loss / static_cast<double>(micro_batches) : loss;
        if (m.loss_scale) scaled = scaled * m.loss_scale->scale;
        scaled.backward();
        step_loss += scaled.detach() / (m.loss_scale ? m.loss_scale->scale : 1.0);
      }
      m.optimizer_step(scheduler.lr(m.state.global_step));
      ++m.state.global_step;
      m.state.epoch = static_cast<double>(epoch) + static_cast<double>(b) / batches;
      m.loss_since_log += step_loss;
      ++m.steps_since_log;
      const int64_t step = m.state.global_step;
      // The last step evaluates and saves under kSteps strategies even off
      // their period, so that a run always ends with a checkpoint (HF saves
      // there too) and, with ReportCallback, a report of its final metrics.
      const bool last = step == max_steps;
      m.control.should_log |=
          args.logging_strategy == Interval::kSteps && step % args.logging_steps == 0;
      m.control.should_evaluate |=
          args.eval_strategy == Interval::kSteps && (step % eval_every == 0 || last);
      m.control.should_save |=
          args.save_strategy == Interval::kSteps && (step % args.save_steps == 0 || last);
      m.each([&](TrainerCallback& c) { c.on_step_end(args, m.state, m.control); });
      m.act_on_control();
    }
    m.control.should_log |= args.logging_strategy == Interval::kEpoch;
    m.control.should_evaluate |= args.eval_strategy == Interval::kEpoch;
    m.control.should_save |= args.save_strategy == Interval::kEpoch;
    m.each([&](TrainerCallback& c) { c.on_epoch_end(args, m.state, m.control); });
    m.act_on_control();
  }
  if (args.load_best_model_at_end && !m.state.best_model_checkpoint.empty()) {
    try {
      m.load_model(m.state.best_model_checkpoint);
    } catch (const std::exception& e) {
      throw tune::StorageError(m.state.best_model_checkpoint.string() +
                               ": cannot load the best model: " + e.what());
    }
  }
  m.each([&](TrainerCallback& c) { c.on_train_end(args, m.state, m.control); });
}

}  // namespace train
