#include "train/loop/callbacks.h"

#include "core/errors.h"
#include "train/checkpoint.h"
#include "train/session.h"

namespace train {

void EarlyStoppingCallback::on_evaluate(const TrainingArguments&, TrainerState&,
                                        TrainerControl& control, tune::Json& metrics) {
  auto it = metrics.find(options_.metric);
  if (it == metrics.end() || !it->is_number()) {
    throw tune::ConfigError("EarlyStoppingCallback: the evaluation has no numeric metric '" +
                            options_.metric + "' (it has " + metrics.dump() + ")");
  }
  const double value = it->get<double>();
  const double sign = options_.greater_is_better ? 1.0 : -1.0;
  if (!best_ || sign * (value - *best_) > options_.threshold) {
    best_ = value;
    bad_evaluations_ = 0;
  } else if (++bad_evaluations_ >= options_.patience) {
    control.should_training_stop = true;
  }
}

tune::Json EarlyStoppingCallback::state() const {
  return {{"best", best_ ? tune::Json(*best_) : tune::Json(nullptr)},
          {"bad_evaluations", bad_evaluations_}};
}

void EarlyStoppingCallback::load_state(const tune::Json& state) {
  best_ = state.at("best").is_null() ? std::nullopt
                                     : std::optional<double>(state.at("best").get<double>());
  bad_evaluations_ = state.at("bad_evaluations").get<int64_t>();
}

tune::Json ReportCallback::metrics_of(const TrainerState& state) {
  tune::Json metrics = tune::Json::object();
  if (state.last_eval.is_object()) {
    metrics = state.last_eval;
  } else if (state.last_log.is_object()) {
    metrics = state.last_log;
  }
  metrics["epoch"] = state.epoch;
  metrics["step"] = state.global_step;
  return metrics;
}

void ReportCallback::on_save(const TrainingArguments&, TrainerState& state, TrainerControl&,
                             const std::filesystem::path& checkpoint) {
  tune::Json metrics = metrics_of(state);
  if (report_) {
    report_(metrics, checkpoint);
  } else {
    train::report(metrics, Checkpoint::from_directory(checkpoint));
  }
}

}  // namespace train
