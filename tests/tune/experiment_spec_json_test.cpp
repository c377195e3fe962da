// The effective spec `tunerun validate --print-config` prints: defaults
// filled in, as JSON and as TOML that parses back.
#include <doctest/doctest.h>
#include <toml++/toml.h>

#include "search/factory.h"
#include "test_util.h"
#include "train/builtins/builtins.h"
#include "tune/spec/json.h"
#include "tune/spec/sweep_file.h"

using tune::Json;

TEST_CASE("a minimal sweep's spec shows every default") {
  train::register_builtin_trainables();
  const auto spec = tune::parse_sweep(R"(
[trainable]
builtin = "quadratic"
[param_space]
x = { uniform = [-5, 5] }
)",
                                      "minimal.toml");
  const Json json = tune::experiment_spec_to_json(spec);
  CHECK(json["name"] == "minimal");
  CHECK(json["storage_path"] == "runs");
  CHECK(json["metric"] == "");
  CHECK(json["mode"] == "min");
  CHECK(json["num_samples"] == 1);
  CHECK(json["max_concurrent_trials"] == 0);
  CHECK(json["seed"] == 0);
  CHECK(json["trainable"] == Json{{"name", "quadratic"},
                                  {"num_workers", 1},
                                  {"cpus_per_worker", 1.0},
                                  {"gpus_per_worker", 0},
                                  {"threads_per_worker", 1},
                                  {"placement_strategy", "PACK"}});
  CHECK(json["param_space"] == Json{{"x", "uniform(-5, 5)"}});
  CHECK(json["search"] == Json{{"algorithm", "random"}});
  CHECK(json["scheduler"] == Json{{"type", "fifo"}});
  CHECK(json["stop"] == Json::object());
  CHECK(json["resources"]["cpus"].get<double>() >= 1);
  CHECK(json["failure"]["heartbeat_timeout_s"] == 30.0);
}

TEST_CASE("the spec keeps the file's values, stop comparisons and commands") {
  const auto spec = tune::parse_sweep(R"(
name = "cmd"
metric = "acc"
mode = "max"
num_samples = 4
[trainable]
command = ["python3", "train.py", "--lr", "{lr}"]
[param_space]
lr = { loguniform = [1e-4, 1e-1] }
[param_space.model]
width = 64
[stop]
training_iteration = 10
loss = { at_most = 0.01 }
)",
                                      "/tmp/sweeps/cmd.toml");
  const Json json = tune::experiment_spec_to_json(spec);
  CHECK(json["mode"] == "max");
  CHECK(json["num_samples"] == 4);
  CHECK(json["trainable"]["command"] == Json{"python3", "train.py", "--lr", "{lr}"});
  CHECK(json["trainable"]["working_dir"] == "/tmp/sweeps");
  CHECK(json["param_space"]["model"]["width"] == 64);
  CHECK(json["stop"] == Json{{"training_iteration", 10.0}, {"loss", {{"at_most", 0.01}}}});

  const toml::table toml = toml::parse(tune::json_to_toml(json));
  CHECK(toml["name"].value<std::string>() == "cmd");
  CHECK(toml["num_samples"].value<int64_t>() == 4);
  CHECK(toml["trainable"]["command"][3].value<std::string>() == "{lr}");
  CHECK(toml["param_space"]["model"]["width"].value<int64_t>() == 64);
  CHECK(toml["stop"]["loss"]["at_most"].value<double>() == 0.01);
  CHECK(toml["scheduler"]["type"].value<std::string>() == "fifo");
}

TEST_CASE("validate --print-config prints the effective spec as TOML or JSON") {
  tune::test::ScratchDir dir;
  dir.write("lc.toml", R"(
metric = "accuracy"
mode = "max"
[trainable]
builtin = "learning_curve"
[param_space]
speed = { grid_search = [0.1, 0.2] }
)");
  auto json = tune::test::run_tunerun("validate --print-config --json lc.toml", dir.path());
  REQUIRE(json.exit_code == 0);
  const Json spec = Json::parse(json.output);
  CHECK(spec["name"] == "lc");
  CHECK(spec["param_space"]["speed"] == "grid_search([0.1,0.2])");
  CHECK(spec["num_samples"] == 1);

  auto text = tune::test::run_tunerun("validate lc.toml --print-config", dir.path());
  REQUIRE(text.exit_code == 0);
  const toml::table toml = toml::parse(text.output);
  CHECK(toml["mode"].value<std::string>() == "max");
  CHECK(toml["trainable"]["name"].value<std::string>() == "learning_curve");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs"));
}

TEST_CASE("a searcher object's kind is stored, a user's own class as custom") {
  train::register_builtin_trainables();
  auto spec = tune::parse_sweep(R"(
metric = "loss"
[trainable]
builtin = "quadratic"
[param_space]
x = { uniform = [-5, 5] }
)",
                                "object.toml");
  spec.custom_searcher = tune::search::tpe();
  Json json = tune::experiment_spec_to_json(spec);
  CHECK(json["search"]["algorithm"] == "tpe");
  CHECK(json["search"]["object"] == true);
  struct Mine final : tune::search::Searcher {
    void set_search_properties(const std::string&, tune::Mode, const tune::ParamSpace&) override {}
    tune::search::Suggestion suggest(const std::string&) override {
      return tune::search::Suggestion::finished();
    }
    Json save() const override { return Json::object(); }
    void restore(const Json&) override {}
  };
  spec.custom_searcher = std::make_shared<Mine>();
  json = tune::experiment_spec_to_json(spec);
  CHECK(json["search"]["algorithm"] == "custom");
}
