#include "tune/tuner.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>

#include "storage/experiment_store.h"
#include "train/worker_runtime.h"
#include "tune/execution/controller.h"
#include "tune/spec/json.h"
#include "tune/spec/validation.h"
#include "tune/system/executable.h"

namespace tune {
namespace {

// Ends a user-given searcher after num_samples suggestions (Ray's
// SearchGenerator does the same around a Searcher). State: the inner
// searcher's plus the count.
class SampleBudget final : public search::Searcher {
 public:
  SampleBudget(std::shared_ptr<search::Searcher> inner, int64_t budget)
      : inner_(std::move(inner)), budget_(budget) {}
  std::string kind() const override { return inner_->kind(); }  // the limited one's
  void set_search_properties(const std::string& metric, Mode mode,
                             const ParamSpace& space) override {
    inner_->set_search_properties(metric, mode, space);
  }
  void set_objectives(const std::vector<Objective>& objectives, const ParamSpace& space) override {
    inner_->set_objectives(objectives, space);
  }
  size_t warm_start(const std::vector<search::PriorTrial>& trials) override {
    return inner_->warm_start(trials);
  }
  search::Suggestion suggest(const std::string& trial_id) override {
    if (budget_ >= 0 && suggested_ >= budget_) return search::Suggestion::finished();
    search::Suggestion s = inner_->suggest(trial_id);
    if (s.status == search::Suggestion::Status::kConfig) ++suggested_;
    return s;
  }
  void on_trial_result(const std::string& trial_id, const Json& result) override {
    inner_->on_trial_result(trial_id, result);
  }
  void on_trial_complete(const std::string& trial_id, const Json* last_result,
                         bool error) override {
    inner_->on_trial_complete(trial_id, last_result, error);
  }
  void on_trial_pause(const std::string& trial_id) override { inner_->on_trial_pause(trial_id); }
  void on_trial_unpause(const std::string& trial_id) override {
    inner_->on_trial_unpause(trial_id);
  }
  Json save() const override { return {{"inner", inner_->save()}, {"suggested", suggested_}}; }
  void restore(const Json& state) override {
    inner_->restore(state.at("inner"));
    suggested_ = state.at("suggested").get<int64_t>();
  }
  int max_pending_trials() const override { return inner_->max_pending_trials(); }

 private:
  std::shared_ptr<search::Searcher> inner_;
  int64_t budget_;
  int64_t suggested_ = 0;
};

// This program's own argv, so that workers start exactly as the driver did
// (and so set up identically). argv[0] becomes the absolute executable path.
std::vector<std::string> own_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  if (argv.empty()) argv.emplace_back();
  argv[0] = self_executable();
  return argv;
}

std::string default_name(const std::string& trainable) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return fmt::format("{}_{:%Y-%m-%d_%H-%M-%S}", trainable, local);
}

}  // namespace

Tuner::Tuner(Trainable trainable, ParamSpace param_space, TuneConfig tune_config,
             RunConfig run_config)
    : trainable_(std::move(trainable)),
      param_space_(std::move(param_space)),
      tune_config_(std::move(tune_config)),
      run_config_(std::move(run_config)) {
  if (!trainable_.func) throw ConfigError::at_key("trainable", "the trainable has no function");
  if (trainable_.name.empty()) throw ConfigError::at_key("trainable", "the trainable has no name");
  if (run_config_.name.empty()) run_config_.name = default_name(trainable_.name);
}

Tuner::Tuner(std::string name, train::TrainFunc func, ParamSpace param_space,
             TuneConfig tune_config, RunConfig run_config)
    : Tuner(Trainable{.name = std::move(name), .func = std::move(func)}, std::move(param_space),
            std::move(tune_config), std::move(run_config)) {}

ResultGrid Tuner::fit() {
  train::register_trainable(trainable_.name, trainable_.func);
  if (is_worker()) {
    // This process is one rank of a trial: run it, and never return into
    // the driver's code after fit().
    const int code = train::run_worker();
    std::fflush(nullptr);
    std::exit(code);
  }
  ExperimentSpec spec;
  spec.name = run_config_.name;
  spec.storage_path = run_config_.storage_path;
  const auto& metrics = tune_config_.metric.values();
  const auto& modes = tune_config_.mode.values();
  if (!metrics.empty()) spec.metric = metrics.front();
  if (metrics.size() > 1) spec.metrics = metrics;
  if (!modes.empty()) spec.mode = modes.front();
  if (modes.size() > 1) spec.modes = modes;
  spec.num_samples = tune_config_.num_samples;
  spec.max_concurrent_trials = tune_config_.max_concurrent_trials;
  spec.seed = tune_config_.seed;
  spec.reuse_workers = tune_config_.reuse_workers;
  spec.prestart_workers = tune_config_.prestart_workers;
  spec.cluster = run_config_.cluster;
  spec.max_failures = run_config_.failure_config.max_failures;
  spec.fail_fast = run_config_.failure_config.fail_fast;
  spec.num_to_keep = run_config_.checkpoint_config.num_to_keep;
  spec.checkpoint_score_attribute = run_config_.checkpoint_config.checkpoint_score_attribute;
  spec.checkpoint_score_order = run_config_.checkpoint_config.checkpoint_score_order;
  spec.trainable.name = trainable_.name;
  static_cast<Resources&>(spec.trainable) = trainable_.resources();
  spec.param_space = param_space_;
  if (tune_config_.search_alg) {
    spec.custom_searcher =
        std::make_shared<SampleBudget>(tune_config_.search_alg, tune_config_.num_samples);
  }
  spec.custom_scheduler = tune_config_.scheduler;
  if (!run_config_.stop.criteria().empty()) {
    spec.stop = run_config_.stop.criteria();
  } else if (run_config_.stop.stopper()) {
    spec.stoppers.push_back(run_config_.stop.stopper());
  }
  if (tune_config_.time_budget_s > 0) {
    spec.stoppers.push_back(std::make_shared<TimeoutStopper>(
        std::chrono::duration<double>(tune_config_.time_budget_s)));
  }
  finish_spec(spec);
  spec.source = experiment_spec_to_json(spec);
  spec.source["api"] = "c++";

  ControllerOptions options;
  options.worker_argv = own_argv();
  options.verbosity = run_config_.verbosity;
  options.progress = make_progress_reporter(run_config_.progress);
  options.callbacks = run_config_.callbacks;
  options.resume = resume_;
  options.resume_errored = restore_options_.resume_errored;
  options.restart_errored = restore_options_.restart_errored;
  const ExperimentSummary summary = TrialController(std::move(spec), std::move(options)).run();
  return ResultGrid::from_experiment(summary.experiment_dir);
}

ResultGrid Tuner::get_results() const {
  return ResultGrid::from_experiment(run_config_.storage_path / run_config_.name);
}

Tuner Tuner::restore(const std::filesystem::path& path, Trainable trainable, ParamSpace param_space,
                     TuneConfig tune_config, RunConfig run_config, RestoreOptions options) {
  const auto dir = std::filesystem::absolute(path).lexically_normal();
  const auto name = dir.has_filename() ? dir.filename() : dir.parent_path().filename();
  run_config.name = name.string();
  run_config.storage_path =
      dir.has_filename() ? dir.parent_path() : dir.parent_path().parent_path();
  if (tune_config.metric.empty() && !is_worker()) {
    if (auto experiment = storage::ExperimentStore::open_read_only(dir).experiment()) {
      tune_config.metric = experiment->metric;
      tune_config.mode = experiment->mode;
      if (!experiment->objectives.empty()) {
        std::vector<std::string> metrics;
        std::vector<Mode> modes;
        for (const Objective& o : experiment->objectives) {
          metrics.push_back(o.metric);
          modes.push_back(o.mode);
        }
        tune_config.metric = metrics;
        tune_config.mode = modes;
      }
    }
  }
  Tuner tuner(std::move(trainable), std::move(param_space), std::move(tune_config),
              std::move(run_config));
  tuner.resume_ = true;
  tuner.restore_options_ = options;
  return tuner;
}

bool Tuner::can_restore(const std::filesystem::path& path) {
  return std::filesystem::is_regular_file(path / "experiment.db");
}

}  // namespace tune
