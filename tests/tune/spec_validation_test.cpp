// finish_spec: the rules across fields hold for every front end's spec. A
// spec built by hand stands in for the C++ API's here (tuner_test.cpp runs
// the Tuner itself; sweep_file_test.cpp the sweep file's reader).
#include <doctest/doctest.h>

#include "schedulers/factory.h"
#include "tune/spec/validation.h"
#include "tune/tune_config.h"

using tune::ConfigError;
using tune::ExperimentSpec;

namespace {

ExperimentSpec bohb_spec() {
  ExperimentSpec spec;
  spec.name = "bohb";
  spec.metric = "loss";
  spec.trainable.name = "noop";
  spec.param_space.set("x", tune::uniform(0, 1));
  spec.custom_searcher = tune::search::bohb();
  return spec;
}

ConfigError error_of(ExperimentSpec spec) {
  try {
    tune::finish_spec(spec);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError");
  return ConfigError("unreachable");
}

}  // namespace

TEST_CASE("the C++ API's BOHB object needs a HyperBand object, as a named one does") {
  ExperimentSpec alone = bohb_spec();
  const ConfigError fifo = error_of(alone);
  CHECK(fifo.key() == "search.algorithm");
  CHECK(fifo.message().find("got \"fifo\"") != std::string::npos);

  ExperimentSpec asha = bohb_spec();
  asha.custom_scheduler = tune::schedulers::asha();
  CHECK(error_of(asha).message().find("got \"asha\"") != std::string::npos);
  // Made by name, the scheduler says its kind all the same.
  ExperimentSpec named = bohb_spec();
  named.custom_scheduler = tune::schedulers::make_scheduler("median", tune::Json::object());
  CHECK(error_of(named).message().find("got \"median_stopping_rule\"") != std::string::npos);
  // A user's own class is "custom".
  struct Mine final : tune::schedulers::TrialScheduler {
    tune::Decision on_trial_result(const tune::schedulers::TrialView&, const tune::Json&) override {
      return tune::Decision::kContinue;
    }
    int choose_trial_to_run(const std::vector<tune::schedulers::TrialView>&) override {
      return -1;
    }
    std::string debug_string() const override { return "mine"; }
  };
  ExperimentSpec own = bohb_spec();
  own.custom_scheduler = std::make_shared<Mine>();
  CHECK(error_of(own).message().find("got \"custom\"") != std::string::npos);

  // An asynchronous HyperBand is an ASHA object whose kind is "hyperband".
  for (bool asynchronous : {false, true}) {
    ExperimentSpec paired = bohb_spec();
    paired.custom_scheduler = tune::schedulers::hyperband({.asynchronous = asynchronous});
    CHECK_NOTHROW(tune::finish_spec(paired));
  }
}

TEST_CASE("a named hyperband beside BOHB defaults to for_bohb, whoever named it") {
  ExperimentSpec spec = bohb_spec();
  spec.custom_searcher = nullptr;
  spec.search_algorithm = "bohb";
  spec.scheduler = "hyperband";
  tune::finish_spec(spec);
  CHECK(spec.scheduler_options["for_bohb"] == true);
  tune::finish_spec(spec);
  CHECK(spec.scheduler_options == tune::Json{{"for_bohb", true}});

  spec.scheduler_options = {{"for_bohb", false}};
  tune::finish_spec(spec);
  CHECK(spec.scheduler_options["for_bohb"] == false);

  // The C++ object's options are its own.
  ExperimentSpec object = bohb_spec();
  object.custom_scheduler = tune::schedulers::hyperband();
  tune::finish_spec(object);
  CHECK(object.scheduler_options.empty());
}

TEST_CASE("ranks beat at least four times per heartbeat timeout, whoever set it") {
  ExperimentSpec spec = bohb_spec();
  spec.custom_searcher = nullptr;
  spec.heartbeat_timeout_s = 2;
  tune::finish_spec(spec);
  CHECK(spec.heartbeat_period_s == 0.5);
  spec.heartbeat_timeout_s = 60;
  tune::finish_spec(spec);
  CHECK(spec.heartbeat_period_s == 0.5);
}

TEST_CASE("field rules and cross-field rules name the sweep-file key") {
  ExperimentSpec spec = bohb_spec();
  spec.custom_searcher = nullptr;
  spec.name = "a b";
  CHECK(error_of(spec).key() == "name");
  spec.name = "ok";
  spec.trainable.num_workers = 0;
  CHECK(error_of(spec).message() ==
        "must be between 1 and 1024, or [min, max] with 1 <= min <= max <= 1024");
  spec.trainable.num_workers = 1;
  spec.cluster.control_address = "10.0.0.1";
  spec.cluster.control_interface = "eth0";
  CHECK(error_of(spec).key() == "cluster.control_interface");
  spec.cluster = {};
  spec.search_algorithm = "tpe";
  spec.search_options = {{"n_startup", 3}};
  CHECK(error_of(spec).key() == "search.n_startup");
  spec.search_options = tune::Json::object();
  spec.metric = "";
  CHECK(error_of(spec).key() == "metric");
}

TEST_CASE("validate_resources names the fields under the caller's table") {
  try {
    tune::validate_resources({.num_workers = 2, .cpus_per_worker = 0}, "scaling_config");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "scaling_config.cpus_per_worker");
    CHECK(e.message() == "must be > 0");
  }
}
