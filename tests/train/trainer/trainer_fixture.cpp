// A program that uses train::TorchTrainer, run by trainer_test.cpp: it is
// the driver and, started again by fit(), every rank. It prints one line
// "RESULT_JSON {...}" with what the driver got back.
//
//   trainer_fixture SCENARIO STORAGE_PATH
//
// Scenarios: fit (one 2-rank job with threads_per_worker), tuner (the
// trainer as a Tuner's trainable, lr searched over train_loop_config),
// failing (a job whose train function throws), gpu (use_gpu where the
// controller is told it has none).
#include <cstdlib>
#include <iostream>

#include "core/errors.h"
#include "train/session.h"
#include "tune/trainer/torch_trainer.h"

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

// Reports what a rank sees: its place in the group, its threads, its config.
void train_func(const tune::Config& config) {
  const auto& ctx = train::get_context();
  if (config.get<bool>("fail")) throw std::runtime_error("the loss went to NaN at step 3");
  for (int epoch = 1; epoch <= config.get<int>("epochs"); ++epoch) {
    train::report({{"world_size", ctx.world_size},
                   {"env_world_size", env_int("WORLD_SIZE")},
                   {"ranks_sum", ctx.world_rank},
                   {"omp_threads", env_int("OMP_NUM_THREADS")},
                   {"lr", config.get<double>("lr")},
                   {"width", config.get<int>("model.width")},
                   {"loss", config.get<double>("lr") * 10 + 1.0 / epoch}},
                  std::nullopt,
                  train::ReportOptions{.reduce = {{"ranks_sum", train::Reduce::kSum}}});
  }
}

tune::Json summary_of(const tune::Result& r) {
  return {{"trial_id", r.trial_id},
          {"status", std::string(to_string(r.status))},
          {"config", r.config},
          {"metrics", r.metrics},
          {"iterations", r.history.size()}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string scenario = argv[1];
  tune::RunConfig run_config{.storage_path = argv[2], .verbosity = 0};
  const tune::Json loop_config = {
      {"lr", 0.1}, {"epochs", 3}, {"fail", false}, {"model", {{"width", 64}}}};
  try {
    if (scenario == "fit") {
      train::TorchTrainer trainer("fit_job", train_func,
                                  {.num_workers = 2, .threads_per_worker = 3}, loop_config,
                                  run_config);
      std::cout << "RESULT_JSON " << summary_of(trainer.fit()).dump() << std::endl;
    } else if (scenario == "tuner") {
      train::TorchTrainer trainer("tuned", train_func, {.num_workers = 2}, loop_config);
      run_config.name = "tuned_sweep";
      tune::Tuner tuner(trainer, {{"lr", tune::grid_search({0.01, 0.02, 0.03})}},
                        {.metric = "loss", .mode = tune::Mode::kMin}, run_config);
      const auto grid = tuner.fit();
      tune::Json out = {{"best", summary_of(grid.get_best_result())},
                        {"errors", grid.num_errors()},
                        {"size", grid.size()}};
      std::cout << "RESULT_JSON " << out.dump() << std::endl;
    } else if (scenario == "failing") {
      tune::Json config = loop_config;
      config["fail"] = true;
      train::TorchTrainer trainer("failing_job", train_func, {.num_workers = 2}, config,
                                  run_config);
      trainer.fit();
      std::cout << "RESULT_JSON {\"thrown\": false}" << std::endl;
    } else if (scenario == "gpu") {
      train::TorchTrainer trainer("gpu_job", train_func, {.num_workers = 1, .use_gpu = true},
                                  loop_config, run_config);
      trainer.fit();
    } else {
      return 2;
    }
  } catch (const tune::TrialError& e) {
    std::cout << "RESULT_JSON " << tune::Json{{"thrown", true}, {"what", e.what()}}.dump()
              << std::endl;
  } catch (const tune::ConfigError& e) {
    std::cout << "RESULT_JSON " << tune::Json{{"config_error", e.what()}, {"key", e.key()}}.dump()
              << std::endl;
  }
  return 0;
}
