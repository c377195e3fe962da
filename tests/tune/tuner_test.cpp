// The C++ API: ResultGrid scopes and NaN filtering, the stoppers, and the
// Tuner end to end through tuner_fixture (a program that is its own worker
// binary), whose callbacks record the hook order.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>

#include "tests/tune/sqlite_query.h"
#include "tests/tune/test_util.h"
#include "tune/builtin_stoppers.h"
#include "tune/result_grid.h"
#include "tune/tune_config.h"

namespace tune {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Result trial(const std::string& id, const std::vector<double>& losses,
             TrialStatus status = TrialStatus::kTerminated) {
  Result r;
  r.trial_id = id;
  r.status = status;
  r.config = {{"id", id}};
  for (size_t i = 0; i < losses.size(); ++i) {
    r.history.push_back({{"loss", losses[i]}, {"training_iteration", i + 1}});
  }
  if (!r.history.empty()) r.metrics = r.history.back();
  return r;
}

ResultGrid scopes_grid() {
  return ResultGrid(
      {trial("a", {1, 9, 9, 9, 9, 9, 9}), trial("b", {10, 10, 10, 10, 10, 10, 3}),
       trial("c", {5, 5, 5, 5, 5, 5, 5}), trial("d", {20, 20, 20, 20, 20, 20, 4, 4, 4, 4, 4})},
      "loss", Mode::kMin, "/tmp/x");
}

TEST_CASE("get_best_result judges each trial by its scope") {
  const ResultGrid grid = scopes_grid();
  CHECK(grid.get_best_result().trial_id == "b");  // last: 3
  CHECK(grid.get_best_result("loss", Mode::kMin, "last").trial_id == "b");
  CHECK(grid.get_best_result("loss", Mode::kMin, "all").trial_id == "a");          // 1
  CHECK(grid.get_best_result("loss", Mode::kMin, "avg").trial_id == "c");          // 5
  CHECK(grid.get_best_result("loss", Mode::kMin, "last-5-avg").trial_id == "d");   // 4
  CHECK(grid.get_best_result("loss", Mode::kMin, "last-10-avg").trial_id == "c");  // 5
  CHECK(grid.get_best_result("loss", Mode::kMax).trial_id == "a");                 // last: 9
  CHECK(grid.get_best_result("loss", Mode::kMax, "all").trial_id == "d");          // 20
}

TEST_CASE("get_best_result filters NaN and infinite scores unless asked not to") {
  const ResultGrid grid(
      {trial("nan", {0, kNaN}), trial("ok", {2, 1}), trial("inf", {0, -kInf}), trial("none", {})},
      "loss", Mode::kMin, "/tmp/x");
  CHECK(grid.get_best_result().trial_id == "ok");
  CHECK(grid.get_best_result("loss", Mode::kMin, "avg").trial_id == "ok");
  // "all" skips NaN values: the NaN trial's best is 0; the -inf trial is filtered.
  CHECK(grid.get_best_result("loss", Mode::kMin, "all").trial_id == "nan");
  const ResultGrid unfiltered({trial("ok", {2, 1}), trial("inf", {0, -kInf})}, "loss", Mode::kMin,
                              "/tmp/x");
  CHECK(unfiltered.get_best_result("loss", Mode::kMin, "last", false).trial_id == "inf");
}

TEST_CASE("get_best_result errors name what is missing") {
  const ResultGrid no_metric({trial("a", {1})}, "", Mode::kMin, "/tmp/x");
  CHECK_THROWS_AS(no_metric.get_best_result(), ConfigError);
  CHECK_THROWS_AS(no_metric.get_best_result("loss"), ConfigError);  // no mode either
  CHECK(no_metric.get_best_result("loss", Mode::kMax).trial_id == "a");
  CHECK_THROWS_AS(scopes_grid().get_best_result("loss", Mode::kMin, "median"), ConfigError);
  CHECK_THROWS_WITH_AS(scopes_grid().get_best_result("accuracy"), doctest::Contains("accuracy"),
                       Error);
  const ResultGrid all_nan({trial("a", {kNaN})}, "loss", Mode::kMin, "/tmp/x");
  CHECK_THROWS_WITH_AS(all_nan.get_best_result(), doctest::Contains("NaN"), Error);
}

TEST_CASE("ResultGrid counts, errors and exports") {
  Result failed = trial("e", {7}, TrialStatus::kError);
  failed.error = "boom, at line 3";
  const ResultGrid grid({trial("a", {1}), failed, trial("p", {}, TrialStatus::kPending)}, "loss",
                        Mode::kMin, "/tmp/exp");
  CHECK(grid.size() == 3);
  CHECK(grid.num_errors() == 1);
  CHECK(grid.num_terminated() == 1);
  REQUIRE(grid.errors().size() == 1);
  CHECK(grid.errors()[0] == "boom, at line 3");
  CHECK(grid.experiment_path() == "/tmp/exp");
  CHECK(grid[1].trial_id == "e");
  int n = 0;
  for (const Result& r : grid) n += !r.trial_id.empty();
  CHECK(n == 3);

  const Json json = grid.to_json();
  REQUIRE(json.size() == 3);
  CHECK(json[1]["status"] == "ERROR");
  CHECK(json[1]["error"] == "boom, at line 3");
  CHECK(json[0]["metrics"]["loss"] == 1);

  test::ScratchDir dir;
  grid.to_csv(dir.path() / "r.csv");
  std::ifstream in(dir.path() / "r.csv");
  std::string header, a, e, p;
  std::getline(in, header);
  std::getline(in, a);
  std::getline(in, e);
  std::getline(in, p);
  CHECK(header == "trial_id,status,config/id,loss,training_iteration");
  CHECK(a == "a,TERMINATED,a,1.0,1");
  CHECK(e == "e,ERROR,e,7.0,1");
  CHECK(p == "p,PENDING,p,,");
}

TEST_CASE("MaximumIterationStopper counts results per trial") {
  MaximumIterationStopper s(3);
  CHECK_FALSE(s.should_stop_trial("a", {}));
  CHECK_FALSE(s.should_stop_trial("a", {}));
  CHECK_FALSE(s.should_stop_trial("b", {}));
  CHECK(s.should_stop_trial("a", {}));
  CHECK_FALSE(s.stop_all());
}

TEST_CASE("stoppers that know their stop ahead lease trials up to the iteration before it") {
  MaximumIterationStopper max_iter(5);
  CHECK_FALSE(max_iter.should_stop_trial("a", {}));
  CHECK(max_iter.continues_through("a", 1) == 4);  // stops at its 5th result
  CHECK_FALSE(max_iter.should_stop_trial("a", {}));
  CHECK(max_iter.continues_through("a", 2) == 4);

  using C = StopCriterion::Comparison;
  CriteriaStopper at_ten({{"training_iteration", 10, C::kAtLeast}});
  CHECK(at_ten.continues_through("a", 3) == 9);
  // A stop on a metric's value, or on time, cannot be known ahead.
  CHECK(CriteriaStopper({{"training_iteration", 10, C::kAtLeast}, {"loss", 0.1, C::kAtMost}})
            .continues_through("a", 3) == 3);
  CHECK(CriteriaStopper({{"time_total_s", 10, C::kAtLeast}}).continues_through("a", 3) == 3);
  // The experiment-wide stoppers never stop one trial: they reach trials on their own.
  TimeoutStopper timeout(std::chrono::seconds(60));
  CHECK(timeout.continues_through("a", 3) == std::numeric_limits<int64_t>::max());
  CombinedStopper both({std::make_shared<TimeoutStopper>(std::chrono::seconds(60)),
                        std::make_shared<CriteriaStopper>(
                            std::vector<StopCriterion>{{"training_iteration", 7, C::kAtLeast}})});
  CHECK(both.continues_through("a", 3) == 6);
  // A stopper without a lease of its own decides on every result.
  CHECK(TrialPlateauStopper({.metric = "loss"}).continues_through("a", 3) == 3);
}

TEST_CASE("TrialPlateauStopper stops a flat trial after its grace period") {
  TrialPlateauStopper s({.metric = "loss", .std = 0.01, .num_results = 3, .grace_period = 4});
  for (double v : {2.0, 1.0, 1.0}) CHECK_FALSE(s.should_stop_trial("a", {{"loss", v}}));
  CHECK_FALSE(s.should_stop_trial("b", {{"loss", 1.0}}));  // other trials are separate
  CHECK(s.should_stop_trial("a", {{"loss", 1.001}}));      // 4th result, window {1, 1, 1.001}
  CHECK(s.reason().find("plateaued") != std::string::npos);

  TrialPlateauStopper missing({.metric = "loss", .num_results = 2, .grace_period = 0});
  CHECK_FALSE(missing.should_stop_trial("a", {{"other", 1}}));
  CHECK_FALSE(missing.should_stop_trial("a", {{"loss", 1}}));  // window {NaN, 1}
  CHECK(missing.should_stop_trial("a", {{"loss", 1}}));
}

TEST_CASE("TrialPlateauStopper waits for metric_threshold") {
  TrialPlateauStopper s({.metric = "acc",
                         .num_results = 2,
                         .grace_period = 0,
                         .metric_threshold = 0.9,
                         .mode = Mode::kMax});
  CHECK_FALSE(s.should_stop_trial("a", {{"acc", 0.5}}));
  CHECK_FALSE(s.should_stop_trial("a", {{"acc", 0.5}}));  // flat but not good enough
  CHECK_FALSE(s.should_stop_trial("a", {{"acc", 0.95}}));
  CHECK(s.should_stop_trial("a", {{"acc", 0.95}}));
  CHECK_THROWS_AS(TrialPlateauStopper({.metric = "acc", .metric_threshold = 0.9}), ConfigError);
  CHECK_THROWS_AS(TrialPlateauStopper({}), ConfigError);
}

TEST_CASE("ExperimentPlateauStopper ends the experiment when the top values agree") {
  ExperimentPlateauStopper s({.metric = "loss", .std = 0.001, .top = 3, .mode = Mode::kMin});
  CHECK_FALSE(s.should_stop_trial("a", {{"loss", 5.0}}));
  CHECK_FALSE(s.should_stop_trial("b", {{"loss", 1.0}}));
  CHECK_FALSE(s.should_stop_trial("c", {{"loss", 1.0}}));
  CHECK_FALSE(s.stop_all());  // top 3 = {1, 1, 5}
  CHECK_FALSE(s.should_stop_trial("a", {{"loss", 1.0}}));
  CHECK(s.stop_all());  // top 3 = {1, 1, 1}

  ExperimentPlateauStopper patient({.metric = "acc", .top = 2, .mode = Mode::kMax, .patience = 2});
  for (int i = 0; i < 2; ++i) patient.should_stop_trial("a", {{"acc", 0.9}});
  CHECK_FALSE(patient.stop_all());                 // plateaued once
  patient.should_stop_trial("a", {{"acc", 0.1}});  // not among the top: still plateaued
  CHECK(patient.stop_all());
}

TEST_CASE("TimeoutStopper stops all once its timeout has passed") {
  Clock::time_point now = Clock::time_point() + std::chrono::hours(1);
  TimeoutStopper s(std::chrono::milliseconds(50), [&] { return now; });
  CHECK_FALSE(s.stop_all());
  CHECK_FALSE(s.should_stop_trial("a", {}));
  now += std::chrono::milliseconds(49);
  CHECK_FALSE(s.stop_all());
  now += std::chrono::milliseconds(1);
  CHECK(s.stop_all());
}

TEST_CASE("CombinedStopper asks every stopper about every result") {
  auto max_iter = std::make_shared<MaximumIterationStopper>(2);
  auto plateau = std::make_shared<ExperimentPlateauStopper>(
      ExperimentPlateauOptions{.metric = "loss", .top = 2});
  CombinedStopper s({max_iter, plateau});
  CHECK_FALSE(s.should_stop_trial("a", {{"loss", 1.0}}));
  CHECK(s.should_stop_trial("a", {{"loss", 1.0}}));
  CHECK(s.reason().find("max_iter") != std::string::npos);
  CHECK(s.stop_all());  // the plateau stopper saw both results
}

TEST_CASE("StopCondition accepts a stop dict, a predicate or a stopper") {
  StopCondition none;
  CHECK(none.stopper() == nullptr);
  StopCondition dict = std::map<std::string, double>{{"training_iteration", 3}};
  CHECK_FALSE(dict.stopper()->should_stop_trial("a", {{"training_iteration", 2}}));
  CHECK(dict.stopper()->should_stop_trial("a", {{"training_iteration", 3}}));
  StopCondition fn = [](const std::string& id, const Json& r) { return id == "b"; };
  CHECK_FALSE(fn.stopper()->should_stop_trial("a", {}));
  CHECK(fn.stopper()->should_stop_trial("b", {}));
  StopCondition object = std::make_shared<MaximumIterationStopper>(1);
  CHECK(object.stopper()->should_stop_trial("a", {}));
}

// ---- end to end through the fixture program ------------------------------------

// A rank that ran trial `t` (pid_func) without being started for it has
// its id in its context and environment, and writes to its log.
void check_rank_took_on(const Json& t) {
  const std::string id = t["trial_id"];
  CHECK(t["metrics"]["context_trial"] == id);
  CHECK(t["metrics"]["env_trial"] == id);
  std::ifstream log(std::filesystem::path(t["path"].get<std::string>()) / "rank_0.log");
  std::stringstream text;
  text << log.rdbuf();
  CHECK(text.str().find("rank 0 runs " + id) != std::string::npos);
}

Json run_fixture(const std::string& scenario, const std::filesystem::path& storage) {
  const auto run = test::run_shell("'" + std::string(TUNER_FIXTURE) + "' " + scenario + " '" +
                                   storage.string() + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::string json = test::result_json_text(run.output);
  REQUIRE_FALSE(json.empty());
  return Json::parse(json);
}

// The hooks of one trial, in order: start, results 1..n, then complete or error.
void check_hook_order(const Json& events, const std::string& trial_id, int64_t iterations,
                      const std::string& last) {
  std::vector<Json> mine;
  for (const auto& e : events) {
    if (e[1] == trial_id) mine.push_back(e);
  }
  INFO(trial_id, " ", events.dump());
  REQUIRE(mine.size() == static_cast<size_t>(iterations + 2));
  CHECK(mine.front()[0] == "start");
  for (int64_t i = 1; i <= iterations; ++i) {
    CHECK(mine[i][0] == "result");
    CHECK(mine[i][2] == i);
  }
  CHECK(mine.back()[0] == last);
}

TEST_CASE("Tuner fit runs the program as its own workers and returns a ResultGrid") {
  test::ScratchDir dir;
  const Json out = run_fixture("basic", dir.path());
  CHECK(out["size"] == 4);
  CHECK(out["num_terminated"] == 3);
  CHECK(out["num_errors"] == 1);
  REQUIRE(out["errors"].size() == 1);
  CHECK(out["errors"][0].get<std::string>().find("x = 4 is not allowed") != std::string::npos);
  // x = 3 reports NaN: filtered; x = 2 wins with 0 + 1/4.
  CHECK(out["best"]["config"]["x"] == 2);
  CHECK(out["best"]["metrics"]["loss"] == doctest::Approx(0.25));
  CHECK(out["best"]["metrics"]["training_iteration"] == 4);  // the stop dict
  CHECK(out["best"]["num_results"] == 4);
  CHECK(out["best"]["num_checkpoints"] == 2);  // num_to_keep
  CHECK(out["best"]["checkpoint"].get<std::string>().ends_with("checkpoint_000004"));
  CHECK(out["experiment_path"].get<std::string>().ends_with("basic"));

  const Json& events = out["events"];
  check_hook_order(events, "basic_00000", 4, "complete");
  check_hook_order(events, "basic_00001", 4, "complete");
  check_hook_order(events, "basic_00002", 4, "complete");
  check_hook_order(events, "basic_00003", 1, "error");

  SUBCASE("restore continues the finished experiment without rerunning it") {
    const Json again = run_fixture("restore", dir.path());
    CHECK(again["can_restore"] == true);
    CHECK(again["can_restore_missing"] == false);
    CHECK(again["grid"]["size"] == 4);
    CHECK(again["grid"]["best"]["trial_id"] == out["best"]["trial_id"]);
    CHECK(again["events"].empty());
  }
}

TEST_CASE("the C++ API's faults: non-std exceptions, invalid resources, a throwing callback") {
  test::ScratchDir dir;
  const Json out = run_fixture("faults", dir.path());
  // A train function that throws an int ends its trial in ERROR with a
  // message, not as "killed by signal 6".
  REQUIRE(out["non_std"].size() == 1);
  CHECK(out["non_std"][0].get<std::string>().find("exception of type int") != std::string::npos);
  // The C++ API is checked as a sweep file is: no trial that never finishes.
  CHECK(out["zero_workers"]["key"] == "trainable.num_workers");
  CHECK(out["zero_workers"]["message"] ==
        "must be between 1 and 1024, or [min, max] with 1 <= min <= max <= 1024");
  CHECK(out["zero_dir_exists"] == false);
  // A callback that throws ends fit() with its error; the experiment row
  // says FAILED (not RUNNING), and the experiment stays restorable.
  CHECK(out["callback_error"] == "the callback broke");
  auto rows = test::query(dir.path() / "broken_callback" / "experiment.db",
                          "SELECT status FROM experiment");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0][0] == "FAILED");
}

TEST_CASE("Tuner honours a CombinedStopper with a plateau stopper") {
  test::ScratchDir dir;
  const Json out = run_fixture("stoppers", dir.path());
  CHECK(out["size"] == 2);
  CHECK(out["num_terminated"] == 2);
  for (const auto& t : out["trials"]) CHECK(t["metrics"]["training_iteration"] == 5);
  check_hook_order(out["events"], "stoppers_00000", 5, "complete");
}

TEST_CASE("time_budget_s ends an unlimited experiment") {
  test::ScratchDir dir;
  const Json out = run_fixture("budget", dir.path());
  CHECK(out["num_errors"] == 0);
  CHECK(out["num_terminated"] == out["size"]);
  CHECK(out["size"].get<int>() >= 2);
  // The budget ended every trial: none reached its 1000th and last report
  // (those created as it ran out never reported).
  int reported = 0;
  for (const auto& t : out["trials"]) {
    if (!t["metrics"].contains("training_iteration")) continue;
    ++reported;
    CHECK(t["metrics"]["training_iteration"] < 1000);
  }
  CHECK(reported >= 2);
}

TEST_CASE("Tuner with a searcher object, ASHA and a stop predicate") {
  test::ScratchDir dir;
  const Json out = run_fixture("searcher", dir.path());
  CHECK(out["size"] == 4);  // num_samples bounds the searcher
  CHECK(out["num_terminated"] == 4);
  for (const auto& t : out["trials"]) CHECK(t["metrics"]["training_iteration"] <= 6);
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

TEST_CASE("a C++ Tuner gets the BOHB rule: HyperBand beside it, or nothing runs") {
  test::ScratchDir dir;
  const Json out = run_fixture("bohb", dir.path());
  for (const auto& [name, got] : {std::pair{"alone", "\"fifo\""}, std::pair{"asha", "\"asha\""}}) {
    CAPTURE(name);
    CHECK(out["refused"][name]["key"] == "search.algorithm");
    const auto message = out["refused"][name]["message"].get<std::string>();
    CHECK(message.find("needs the \"hyperband\" scheduler") != std::string::npos);
    CHECK(message.find(got) != std::string::npos);
    CHECK(out["dir_exists"][name] == false);
  }
  const Json& run = out["async_hyperband"];
  CHECK(run["size"] == 3);
  CHECK(run["num_terminated"] == 3);
  for (const auto& t : run["trials"]) CHECK(t["metrics"]["training_iteration"] <= 3);
}

TEST_CASE("reuse_workers: finished trials' ranks run the next ones, a failed group is replaced") {
  test::ScratchDir dir;
  const Json r = run_fixture("reuse", dir.path());
  CHECK(r["size"] == 6);
  CHECK(r["num_terminated"] == 5);
  CHECK(r["num_errors"] == 1);
  std::vector<int64_t> pids;  // rank 0's process, per trial in order
  std::set<std::string> ports;
  for (const auto& t : r["trials"]) {
    const std::string id = t["trial_id"];
    INFO(t.dump());
    if (t["config"]["x"] == 3) {
      CHECK(t["status"] == "ERROR");
      CHECK(t["error"].get<std::string>().find("x = 3 fails") != std::string::npos);
      pids.push_back(-1);
      continue;
    }
    CHECK(t["status"] == "TERMINATED");
    CHECK(t["metrics"]["training_iteration"] == 3);
    // A reused rank takes on the new trial's identity, port and log file.
    check_rank_took_on(t);
    ports.insert(t["metrics"]["master_port"].get<std::string>());
    pids.push_back(t["metrics"]["pid"].get<int64_t>());
  }
  REQUIRE(pids.size() == 6);
  // x = 1, 2 share processes; x = 3's died with it; x = 4, 5, 6 share new ones.
  CHECK(pids[0] == pids[1]);
  CHECK(pids[3] == pids[4]);
  CHECK(pids[4] == pids[5]);
  CHECK(pids[3] != pids[0]);
  CHECK(ports.size() == 5);  // every run rendezvouses on its own port
}

TEST_CASE("prestart_workers: each trial runs in fresh processes, started while the last one ran") {
  test::ScratchDir dir;
  const auto run = test::run_shell("'" + std::string(TUNER_FIXTURE) + "' prestart '" +
                                   dir.path().string() + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const Json r = Json::parse(test::result_json_text(run.output));
  CHECK(r["num_terminated"] == 5);
  CHECK(r["num_errors"] == 1);
  std::set<int64_t> pids;
  std::set<std::string> ports;
  for (const auto& t : r["trials"]) {
    const std::string id = t["trial_id"];
    INFO(t.dump());
    if (t["status"] == "ERROR") continue;  // x = 3: its group is not used again
    // A prestarted rank takes on its trial's identity, port and log file.
    check_rank_took_on(t);
    ports.insert(t["metrics"]["master_port"].get<std::string>());
    pids.insert(t["metrics"]["pid"].get<int64_t>());
  }
  CHECK(pids.size() == 5);  // no process ran two trials
  CHECK(ports.size() == 5);
  // Each trial runs 300 ms, time enough for the next one's spare to connect.
  CHECK(run.output.find("(on prestarted ranks)") != std::string::npos);
}

}  // namespace
}  // namespace tune
