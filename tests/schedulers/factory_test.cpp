// make_scheduler: every type by name, every option checked, errors naming the key.
#include "schedulers/factory.h"

#include <doctest/doctest.h>

#include "schedulers/internal/asha.h"
#include "schedulers/trial_scheduler.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

// The key of the ConfigError make_scheduler(type, options) throws, or "".
std::string error_key(const std::string& type, const Json& options) {
  try {
    make_scheduler(type, options);
  } catch (const ConfigError& e) {
    return e.key();
  }
  return "";
}

std::string error_message(const std::string& type, const Json& options) {
  try {
    make_scheduler(type, options);
  } catch (const ConfigError& e) {
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("every scheduler type and alias is made with its defaults") {
  for (const char* type :
       {"fifo", "asha", "async_hyperband", "hyperband", "median", "median_stopping_rule"}) {
    CAPTURE(type);
    CHECK(make_scheduler(type, Json::object()) != nullptr);
  }
  CHECK(make_scheduler("pbt", Json::parse(R"({"hyperparam_mutations": {"lr": [0.1, 0.01]}})")));
  CHECK(make_scheduler("pb2", Json::parse(R"({"hyperparam_bounds": {"lr": [0.0001, 0.1]}})")));
  CHECK(make_scheduler("asha", Json())->debug_string().find("AsyncHyperBand") == 0);
  // Asynchronous HyperBand: ASHA over HyperBand's brackets.
  CHECK(make_scheduler("hyperband", Json{{"asynchronous", true}, {"seed", 3}})
            ->debug_string()
            .find("AsyncHyperBand") == 0);
  CHECK(make_scheduler("hyperband", Json::object())->debug_string().find("HyperBand:") == 0);
  CHECK(error_key("hyperband", Json{{"asynchronous", "yes"}}) == "asynchronous");
}

TEST_CASE("options from a TOML scheduler table are read with their types") {
  auto s = make_scheduler("asha", Json::parse(R"({"max_t": 81, "grace_period": 1,
      "reduction_factor": 3, "brackets": 1, "stop_last_trials": false, "promotion": true,
      "time_attr": "training_iteration", "metric": "acc", "mode": "max", "seed": 3})"));
  CHECK(dynamic_cast<AshaScheduler&>(*s).milestones() == std::vector<double>{81, 27, 9, 3, 1});
  CHECK(make_scheduler("pbt", Json::parse(R"({"perturbation_interval": 4, "burn_in_period": 2,
      "quantile_fraction": 0.5, "resample_probability": 0.1, "perturbation_factors": [1.5, 0.5],
      "synch": true, "seed": 1, "hyperparam_mutations": {"lr": {"loguniform": [1e-4, 1e-1]},
      "momentum": [0.8, 0.9, 0.99], "opt": {"beta": {"uniform": [0.8, 0.99]}}}})")));
  CHECK(make_scheduler("median", Json::parse(R"({"grace_period": 10, "min_samples_required": 2,
      "min_time_slice": 1, "hard_stop": false})")));
  CHECK(make_scheduler("hyperband", Json::parse(R"({"max_t": 27, "reduction_factor": 3,
      "stop_last_trials": true})")));
}

TEST_CASE("unknown options are errors that list the known keys") {
  CHECK(error_key("asha", {{"max_iter", 10}}) == "max_iter");
  CHECK(error_message("asha", {{"max_iter", 10}}).find("grace_period") != std::string::npos);
  CHECK(error_key("hyperband", {{"grace_period", 1}}) == "grace_period");
  CHECK(error_key("median", {{"brackets", 1}}) == "brackets");
  CHECK(error_key("pbt", {{"hyperparam_bounds", Json::object()}}) == "hyperparam_bounds");
  CHECK(error_key("pb2", {{"hyperparam_mutations", Json::object()}}) == "hyperparam_mutations");
  CHECK(error_key("fifo", {{"max_t", 3}}) == "max_t");
  CHECK(error_key("asha2", Json::object()) == "type");
}

TEST_CASE("wrong types and values name the option") {
  CHECK(error_key("asha", {{"max_t", "100"}}) == "max_t");
  CHECK(error_key("asha", {{"max_t", 0}}) == "max_t");
  CHECK(error_key("asha", {{"grace_period", 200}}) == "grace_period");
  CHECK(error_key("asha", {{"reduction_factor", 1}}) == "reduction_factor");
  CHECK(error_key("asha", {{"brackets", 1.5}}) == "brackets");
  CHECK(error_key("asha", {{"stop_last_trials", 1}}) == "stop_last_trials");
  CHECK(error_key("asha", {{"mode", "maximize"}}) == "mode");
  CHECK(error_key("asha", {{"metric", 3}}) == "metric");
  CHECK(error_key("asha", {{"seed", -1}}) == "seed");
  CHECK(error_key("hyperband", {{"max_t", 0.5}}) == "max_t");
  CHECK(error_key("median", {{"min_samples_required", 0}}) == "min_samples_required");
  CHECK(error_key("median", {{"hard_stop", "no"}}) == "hard_stop");
  CHECK(error_key("pbt", Json::object()) == "hyperparam_mutations");  // nothing to explore
  const Json lr = {{"lr", {0.1, 0.01}}};
  CHECK(error_key("pbt", {{"hyperparam_mutations", lr}, {"quantile_fraction", 0.6}}) ==
        "quantile_fraction");
  CHECK(error_key("pbt", {{"hyperparam_mutations", lr}, {"perturbation_interval", 0}}) ==
        "perturbation_interval");
  CHECK(error_key("pbt", {{"hyperparam_mutations", lr}, {"perturbation_factors", {"a"}}}) ==
        "perturbation_factors");
  CHECK(error_key("pbt", {{"hyperparam_mutations", {{"lr", {{"loguniform", {0, 1}}}}}}}) ==
        "hyperparam_mutations.lr");
  CHECK(error_key("pbt", {{"hyperparam_mutations", {{"lr", 3}}}}) == "hyperparam_mutations.lr");
  CHECK(error_key("pbt", {{"hyperparam_mutations", {{"opt", {{"beta", Json::array()}}}}}}) ==
        "hyperparam_mutations.opt.beta");
  CHECK(error_key("pb2", Json::object()) == "hyperparam_bounds");
  CHECK(error_key("pb2", {{"hyperparam_bounds", {{"lr", {1, 0}}}}}) == "hyperparam_bounds.lr");
  CHECK(error_key("asha", Json::array()) == "type");
}

TEST_CASE("metric and mode options override the experiment's") {
  auto s = make_scheduler(
      "asha", {{"metric", "acc"}, {"mode", "max"}, {"max_t", 4}, {"reduction_factor", 2}});
  s->set_search_properties("loss", Mode::kMin);
  Trace t(*s, "training_iteration", "acc");
  t.add("a"), t.add("b");
  CHECK(t.report("a", 1, 0.9) == kContinue);
  CHECK(t.report("b", 1, 0.1) == kStop);  // lower accuracy loses: mode max, metric acc
  // Without a metric anywhere, a ranking scheduler cannot work.
  auto bare = make_scheduler("asha", Json::object());
  try {
    bare->set_search_properties("", Mode::kMin);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "metric");
  }
}

TEST_CASE("every scheduler says its kind as a sweep file names it; a user's class is custom") {
  CHECK(fifo()->kind() == "fifo");
  CHECK(asha()->kind() == "asha");
  CHECK(hyperband()->kind() == "hyperband");
  // An asynchronous HyperBand is an ASHA over HyperBand's brackets.
  CHECK(hyperband({.asynchronous = true})->kind() == "hyperband");
  CHECK(mo_asha()->kind() == "mo_asha");
  CHECK(median_stopping()->kind() == "median_stopping_rule");
  CHECK(make_scheduler("async_hyperband", Json::object())->kind() == "asha");
  CHECK(make_scheduler("hyperband", Json{{"asynchronous", true}})->kind() == "hyperband");
  CHECK(make_scheduler("pbt", Json::parse(R"({"hyperparam_mutations": {"lr": [0.1, 0.01]}})"))
            ->kind() == "pbt");
  CHECK(make_scheduler("pb2", Json::parse(R"({"hyperparam_bounds": {"lr": [0.0001, 0.1]}})"))
            ->kind() == "pb2");
  struct Mine final : TrialScheduler {
    Decision on_trial_result(const TrialView&, const Json&) override { return Decision::kContinue; }
    int choose_trial_to_run(const std::vector<TrialView>&) override { return -1; }
    std::string debug_string() const override { return "mine"; }
  };
  CHECK(Mine().kind() == "custom");
}
