#include "tune/spec/sweep_file.h"

#include <doctest/doctest.h>

#include "schedulers/factory.h"
#include "schedulers/trial_scheduler.h"
#include "train/builtins/builtins.h"
#include "tune/spec/json.h"

using tune::ConfigError;
using tune::ExperimentSpec;
using tune::parse_sweep;

namespace {

// The ConfigError that parsing `text` raises (fails the test when none).
ConfigError error_of(const std::string& text) {
  train::register_builtin_trainables();
  try {
    parse_sweep(text, "sweep.toml");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << text);
  return ConfigError("unreachable");
}

const char* kValid = R"(
name = "demo"
metric = "loss"
mode = "min"
num_samples = 3
max_concurrent_trials = 2
seed = 11

[trainable]
builtin = "quadratic"
num_workers = 2

[param_space]
x = { uniform = [-5, 5] }
lr = { loguniform = [1e-4, 1e-1] }
layers = { randint = [1, 4] }
act = { choice = ["relu", 3, true] }
y = { grid_search = [-1, 0, 1] }
epochs = 10
[param_space.model]
width = { grid_search = [64, 128] }

[search]
algorithm = "random"

[scheduler]
type = "fifo"

[stop]
training_iteration = 10
loss = { at_most = 0.01 }
)";

}  // namespace

TEST_CASE("a full sweep file loads into a spec") {
  train::register_builtin_trainables();
  ExperimentSpec spec = parse_sweep(kValid, "sweep.toml");
  CHECK(spec.name == "demo");
  CHECK(spec.metric == "loss");
  CHECK(spec.mode == tune::Mode::kMin);
  CHECK(spec.num_samples == 3);
  CHECK(spec.max_concurrent_trials == 2);
  CHECK(spec.seed == 11);
  CHECK(spec.trainable.name == "quadratic");
  CHECK(spec.trainable.num_workers == 2);
  CHECK(spec.param_space.num_grid_cells() == 6);
  REQUIRE(spec.stop.size() == 2);
  CHECK(spec.stop[0].key == "training_iteration");
  CHECK(spec.stop[1].comparison == tune::StopCriterion::Comparison::kAtMost);
  tune::Rng rng(1);
  tune::Json config = spec.param_space.resolve(5, rng);
  // Grid keys in file order (y, then model.width), the first varying slowest:
  // cell 5 of 3 x 2 is y[2], width[1].
  CHECK(config["y"] == 1);
  CHECK(config["model"]["width"] == 128);
  CHECK(spec.param_space.resolve(1, rng)["y"] == -1);
  CHECK(spec.param_space.resolve(1, rng)["model"]["width"] == 128);
  CHECK(config["epochs"] == 10);
  CHECK(config["layers"].is_number_integer());
}

TEST_CASE("num_workers = [min, max] makes an elastic group; a reversed range is refused") {
  train::register_builtin_trainables();
  auto spec =
      tune::parse_sweep("[trainable]\nbuiltin = \"noop\"\nnum_workers = [2, 4]\n", "elastic.toml");
  CHECK(spec.trainable.min_workers == 2);
  CHECK(spec.trainable.num_workers == 4);
  CHECK(spec.trainable.elastic());
  CHECK(tune::experiment_spec_to_json(spec)["trainable"]["num_workers"] == tune::Json{2, 4});
  CHECK_THROWS_WITH_AS(
      tune::parse_sweep("[trainable]\nbuiltin = \"noop\"\nnum_workers = [4, 2]\n", "reversed.toml"),
      doctest::Contains("[min, max] with 1 <= min <= max <= 1024"), tune::ConfigError);
}

TEST_CASE("the experiment name defaults to the file's stem") {
  train::register_builtin_trainables();
  auto spec = parse_sweep("[trainable]\nbuiltin = \"noop\"\n", "/some/dir/my_sweep.toml");
  CHECK(spec.name == "my_sweep");
}

TEST_CASE("malformed TOML names the file and the line") {
  ConfigError e = error_of("name = \"x\"\n\n[trainable\nbuiltin = 1\n");
  CHECK(e.file() == "sweep.toml");
  CHECK(e.line() == 3);
  CHECK(std::string(e.what()).starts_with("sweep.toml:3: "));
}

TEST_CASE("unknown keys are errors with their line and dotted key") {
  ConfigError top = error_of("[trainable]\nbuiltin = \"noop\"\n\nnum_sample = 3\n");
  CHECK(top.key() == "trainable.num_sample");
  CHECK(top.line() == 4);
  CHECK(top.message().find("unknown key") != std::string::npos);

  ConfigError root = error_of("metrc = \"loss\"\n[trainable]\nbuiltin = \"noop\"\n");
  CHECK(root.key() == "metrc");
  CHECK(root.line() == 1);
}

TEST_CASE("bad domains are errors at their key") {
  ConfigError e =
      error_of("[trainable]\nbuiltin = \"noop\"\n[param_space]\nlr = { loguniform = [0, 1] }\n");
  CHECK(e.key() == "param_space.lr");
  CHECK(e.line() == 4);
  CHECK(e.message().find("loguniform") != std::string::npos);

  ConfigError typo =
      error_of("[trainable]\nbuiltin = \"noop\"\n[param_space]\nx = { unifrom = [0, 1] }\n");
  CHECK(typo.message().find("unknown domain 'unifrom'") != std::string::npos);

  ConfigError ints =
      error_of("[trainable]\nbuiltin = \"noop\"\n[param_space]\nn = { randint = [1.5, 4] }\n");
  CHECK(ints.key() == "param_space.n");

  ConfigError empty =
      error_of("[trainable]\nbuiltin = \"noop\"\n[param_space]\nc = { choice = [] }\n");
  CHECK(empty.key() == "param_space.c");
}

TEST_CASE("wrong types, unknown trainables, algorithms and options are named") {
  CHECK(error_of("num_samples = \"3\"\n[trainable]\nbuiltin = \"noop\"\n").key() == "num_samples");
  CHECK(error_of("mode = \"maximize\"\n[trainable]\nbuiltin = \"noop\"\n").key() == "mode");
  ConfigError trainable = error_of("[trainable]\nbuiltin = \"resnet\"\n");
  CHECK(trainable.key() == "trainable.builtin");
  CHECK(trainable.message().find("quadratic") != std::string::npos);  // lists the known ones
  CHECK(error_of("metric = \"loss\"\n").key() == "trainable");

  ConfigError algorithm =
      error_of("[trainable]\nbuiltin = \"noop\"\n[search]\nalgorithm = \"tpe2\"\n");
  CHECK(algorithm.key() == "search.algorithm");
  CHECK(algorithm.line() == 4);
  ConfigError option =
      error_of("[trainable]\nbuiltin = \"noop\"\n[search]\nalgorithm = \"random\"\nseeds = 3\n");
  CHECK(option.key() == "search.seeds");
  CHECK(option.line() == 5);
  ConfigError scheduler =
      error_of("[trainable]\nbuiltin = \"noop\"\n[scheduler]\ntype = \"fifo\"\nmax_t = 3\n");
  CHECK(scheduler.key() == "scheduler.max_t");
  ConfigError stop = error_of("[trainable]\nbuiltin = \"noop\"\n[stop]\nloss = { below = 1 }\n");
  CHECK(stop.key() == "stop.loss");
  CHECK(error_of("name = \"a/b\"\n[trainable]\nbuiltin = \"noop\"\n").key() == "name");
}

TEST_CASE("bohb needs the hyperband scheduler, named at [search] algorithm") {
  const std::string head =
      "metric = \"loss\"\n[trainable]\nbuiltin = \"noop\"\n[param_space]\nx = { uniform = [0, "
      "1] }\n[search]\nalgorithm = \"bohb\"\n";
  ConfigError alone = error_of(head);
  CHECK(alone.key() == "search.algorithm");
  CHECK(alone.line() == 7);
  CHECK(alone.file() == "sweep.toml");
  CHECK(alone.message().find("hyperband") != std::string::npos);
  ConfigError asha = error_of(head + "[scheduler]\ntype = \"asha\"\n");
  CHECK(asha.key() == "search.algorithm");
  CHECK(asha.message().find("\"asha\"") != std::string::npos);

  train::register_builtin_trainables();
  const ExperimentSpec spec =
      parse_sweep(head + "min_points_in_model = 4\n[scheduler]\ntype = \"hyperband\"\nmax_t = 9\n",
                  "sweep.toml");
  CHECK(spec.search_algorithm == "bohb");
  CHECK(spec.search_options["min_points_in_model"] == 4);
  CHECK(spec.scheduler == "hyperband");
  CHECK(spec.scheduler_options["for_bohb"] == true);  // as Ray's HyperBandForBOHB
  // Asynchronous HyperBand pairs with BOHB too.
  const ExperimentSpec async =
      parse_sweep(head + "[scheduler]\ntype = \"hyperband\"\nasynchronous = true\n", "sweep.toml");
  CHECK(async.scheduler_options["asynchronous"] == true);
  CHECK(tune::schedulers::make_scheduler(async.scheduler, async.scheduler_options)
            ->debug_string()
            .find("AsyncHyperBand") == 0);
}

TEST_CASE("[cluster] says where ranks run and bad values name the file, line and key") {
  train::register_builtin_trainables();
  const std::string head = "[trainable]\nbuiltin = \"noop\"\n\n[cluster]\n";
  ExperimentSpec plain = parse_sweep("[trainable]\nbuiltin = \"noop\"\n", "sweep.toml");
  CHECK(plain.cluster.launcher == "auto");
  CHECK(plain.cluster.control_address.empty());
  ExperimentSpec slurm =
      parse_sweep(head + "launcher = \"slurm\"\ncontrol_address = \"198.18.0.1\"\n", "sweep.toml");
  CHECK(slurm.cluster.launcher == "slurm");
  CHECK(slurm.cluster.control_address == "198.18.0.1");
  CHECK(parse_sweep(head + "control_interface = \"eth0\"\n", "sweep.toml")
            .cluster.control_interface == "eth0");
  CHECK(slurm.cluster.slurm_poll_s == 30);
  CHECK(parse_sweep(head + "slurm_poll_s = 2.5\n", "sweep.toml").cluster.slurm_poll_s == 2.5);
  ConfigError poll = error_of(head + "slurm_poll_s = 0\n");
  CHECK(std::string(poll.what()).starts_with("sweep.toml:5: "));
  CHECK(poll.key() == "cluster.slurm_poll_s");
  CHECK(poll.message() == "must be between 1 and 3600");

  ConfigError launcher = error_of(head + "launcher = \"kubernetes\"\n");
  CHECK(std::string(launcher.what()).starts_with("sweep.toml:5: "));
  CHECK(launcher.key() == "cluster.launcher");
  CHECK(launcher.message().find("'kubernetes' is not a launcher") != std::string::npos);
  ConfigError address = error_of(head + "launcher = \"slurm\"\ncontrol_address = \"n1:80\"\n");
  CHECK(address.key() == "cluster.control_address");
  CHECK(address.line() == 6);
  ConfigError both =
      error_of(head + "control_address = \"10.0.0.1\"\ncontrol_interface = \"eth0\"\n");
  CHECK(both.key() == "cluster.control_interface");
  ConfigError typo = error_of(head + "launch = \"slurm\"\n");
  CHECK(typo.key() == "cluster.launch");
  CHECK(typo.line() == 5);
  ConfigError type = error_of(head + "launcher = 1\n");
  CHECK(type.message() == "expected a string");
}
