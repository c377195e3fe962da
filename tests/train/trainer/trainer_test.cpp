// train::TorchTrainer end to end: trainer_fixture is a program that uses it,
// driver and ranks in one binary, as a user's program would be.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "core/config.h"
#include "tests/tune/test_util.h"
#include "tune/trainer/torch_trainer.h"

namespace {

using tune::Json;

using Scratch = tune::test::ScratchDir;

Json run_fixture(const std::string& scenario, const std::filesystem::path& storage,
                 const std::string& env = "") {
  const auto run = tune::test::run_shell(env + " '" + std::string(TRAINER_FIXTURE) + "' " +
                                         scenario + " '" + storage.string() + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::string json = tune::test::result_json_text(run.output);
  REQUIRE_FALSE(json.empty());
  return Json::parse(json);
}

TEST_CASE("TorchTrainer.fit runs one job on 2 ranks with train_loop_config and its threads") {
  Scratch dir;
  const Json r = run_fixture("fit", dir.path());
  CHECK(r["status"] == "TERMINATED");
  CHECK(r["iterations"] == 3);
  CHECK(r["metrics"]["world_size"] == 2);
  CHECK(r["metrics"]["env_world_size"] == 2);
  CHECK(r["metrics"]["ranks_sum"] == 1);  // 0 + 1: both ranks reported
  CHECK(r["metrics"]["omp_threads"] == 3);
  CHECK(r["config"] ==
        Json{{"lr", 0.1}, {"epochs", 3}, {"fail", false}, {"model", {{"width", 64}}}});
  CHECK(std::filesystem::exists(dir.path() / "fit_job" / "experiment.db"));
}

TEST_CASE("TorchTrainer as a Tuner's trainable: searched keys override train_loop_config") {
  Scratch dir;
  const Json r = run_fixture("tuner", dir.path());
  CHECK(r["size"] == 3);
  CHECK(r["errors"] == 0);
  CHECK(r["best"]["metrics"]["lr"] == 0.01);
  CHECK(r["best"]["metrics"]["width"] == 64);  // kept from train_loop_config
  CHECK(r["best"]["metrics"]["world_size"] == 2);
  CHECK(r["best"]["metrics"]["omp_threads"] == 1);  // 1 CPU per worker: 1 thread
}

TEST_CASE("TorchTrainer.fit throws TrialError with the rank's error when the job fails") {
  Scratch dir;
  const Json r = run_fixture("failing", dir.path());
  CHECK(r["thrown"] == true);
  CHECK(r["what"].get<std::string>().find("the loss went to NaN at step 3") != std::string::npos);
}

TEST_CASE("TorchTrainer with use_gpu on a machine without GPUs is a ConfigError naming the field") {
  Scratch dir;
  const Json r = run_fixture("gpu", dir.path(), "CUDA_VISIBLE_DEVICES=-1");
  CHECK(r["key"] == "trainable.gpus_per_worker");
  CHECK(r["config_error"].get<std::string>().find("needs 1 GPUs") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "gpu_job" / "experiment.db"));
}

TEST_CASE("ScalingConfig is validated when the trainer is made") {
  auto noop = [](const tune::Config&) {};
  CHECK_THROWS_WITH_AS(
      train::TorchTrainer("t", noop, {.num_workers = 0}),
      doctest::Contains("key 'scaling_config.num_workers': must be between 1 and 1024"),
      tune::ConfigError);
  CHECK_THROWS_WITH_AS(
      train::TorchTrainer("t", noop, {.resources_per_worker = {.cpus = 1, .gpus = 2}}),
      doctest::Contains("use_gpu is false"), tune::ConfigError);
  CHECK_THROWS_AS(train::TorchTrainer("t", noop, {}, Json::array()), tune::ConfigError);
  CHECK_THROWS_AS(train::TorchTrainer("t", nullptr), tune::ConfigError);
  const tune::Trainable t = train::TorchTrainer(
      "t", noop, {.num_workers = 3, .use_gpu = true, .resources_per_worker = {.cpus = 2}});
  CHECK(t.num_workers == 3);
  CHECK(t.cpus_per_worker == 2);
  CHECK(t.gpus_per_worker == 1);
}

}  // namespace
