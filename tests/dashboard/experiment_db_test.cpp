#include "dashboard/experiment_db.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>

#include "core/errors.h"
#include "fixture.h"
#include "tests/storage/version3.h"

namespace tune::dashboard {
namespace {

using DashboardDir = test::ScratchDir;
using test::write_experiment;

TEST_CASE("summary: counts, best trial, metrics and the parameters that vary, log domains marked") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  const Json s = ExperimentDb::open(dir).summary();
  CHECK(s["name"] == "asha");
  CHECK(s["num_trials"] == 12);
  CHECK(s["counts"]["TERMINATED"] == 12);
  CHECK(s["num_results"] == 8 * 9 + 4 * 3);
  CHECK(s["scheduler"] == "asha");
  CHECK(s["metrics"] == Json::array({"accuracy", "loss"}));
  // lr = 10^-2.5 is the optimum: trial 6 (10^-2.36) is nearest among the full runs.
  CHECK(s["best"]["trial_id"] == "asha_00006");
  CHECK(s["best"]["config"].contains("opt.momentum"));
  Json params = s["params"];
  REQUIRE(params.size() == 2);  // opt.momentum never varies
  CHECK(params[0]["name"] == "layers");
  CHECK(params[0]["log"] == false);
  CHECK(params[1]["name"] == "lr");
  CHECK(params[1]["log"] == true);
}

TEST_CASE("trials: every trial with flattened config, last metrics, and readable reasons") {
  DashboardDir runs;
  const Json trials = ExperimentDb::open(write_experiment(runs.path(), "asha")).trials();
  REQUIRE(trials.size() == 12);
  CHECK(trials[0]["config"]["opt.momentum"] == 0.9);
  CHECK(trials[2]["iteration"] == 3);
  // The reason the scheduler recorded, as it recorded it.
  CHECK(trials[2]["reason"] == test::kAshaStop);
  // The older form keeps only the scheduler's name of its status line.
  CHECK(trials[11]["reason"] == "stopped by scheduler AsyncHyperBand at iteration 3");
  CHECK(trials[3]["iteration"] == 9);
  CHECK(trials[1]["reason"].get<std::string>().find("exploited trial asha_00000 at iteration 4") !=
        std::string::npos);
}

TEST_CASE("curves: one per trial, stopped ones marked, and of many trials keep the best, thinned") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  const auto db = ExperimentDb::open(dir);
  const Json all = db.curves("accuracy", {});
  CHECK(all["total"] == 12);
  REQUIRE(all["trials"].size() == 12);
  CHECK(all["trials"][2]["stopped"] == true);
  CHECK(all["trials"][2]["value"].size() == 3);
  CHECK(all["trials"][0]["iteration"].back() == 9);

  const Json few = db.curves("accuracy", {.max_curve_trials = 3, .max_curve_points = 4});
  CHECK(few["total"] == 12);
  REQUIRE(few["trials"].size() == 3);
  CHECK(few["trials"][0]["trial_id"] == "asha_00006");                // the best first
  CHECK(few["trials"][0]["iteration"] == Json::array({1, 3, 6, 9}));  // the last one always kept
}

TEST_CASE("curves: the best N by the chosen metric's own direction, failed trials last") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  const QueryLimits three{.max_curve_trials = 3};
  {
    const auto db = ExperimentDb::open(dir);
    // loss = 1 - accuracy: its lowest is the most accurate trial, though
    // the experiment maximises.
    const Json lowest = db.curves("loss", three, "min");
    CHECK(lowest["mode"] == "min");
    CHECK(lowest["trials"][0]["trial_id"] == "asha_00006");
    CHECK(db.curves("loss", three, "max")["trials"][0]["trial_id"] != "asha_00006");
    // An objective ranks by its own mode whatever is asked.
    CHECK(db.curves("accuracy", three, "min")["trials"][0]["trial_id"] == "asha_00006");
  }
  {
    auto store = storage::ExperimentStore::open(dir);
    store.set_trial_status("asha_00006", TrialStatus::kError, "boom", 1100);
    store.flush();
  }
  const auto db = ExperimentDb::open(dir);
  const Json curves =
      db.curves("accuracy", three);  // a range-for over a temporary's member dangles
  for (const Json& t : curves["trials"]) CHECK(t["trial_id"] != "asha_00006");
  CHECK(db.summary()["best"]["trial_id"] != "asha_00006");
}

TEST_CASE("summary: the searcher and the scheduler named, HyperBand's variants apart") {
  CHECK(search_algorithm(Json::object()) == "random");
  CHECK(search_algorithm({{"search", {{"algorithm", "tpe"}}}}) == "tpe");
  const Json async = {{"scheduler", {{"type", "hyperband"}, {"asynchronous", true}}}};
  CHECK(scheduler_name(async, "hyperband") == "async_hyperband");
  const Json bohb = {{"scheduler", {{"type", "hyperband"}, {"for_bohb", true}}}};
  CHECK(scheduler_name(bohb, "hyperband") == "hyperband_for_bohb");
  CHECK(scheduler_name(Json::object(), "median") == "median_stopping_rule");
  DashboardDir runs;
  const Json s = ExperimentDb::open(write_experiment(runs.path(), "asha")).summary();
  CHECK(s["search"] == "random");
  CHECK(s["scheduler"] == "asha");
}

TEST_CASE(
    "trial: results, events, checkpoints and the log tail, and an unknown trial is NotFound") {
  DashboardDir runs;
  const auto db = ExperimentDb::open(write_experiment(runs.path(), "asha"));
  const Json t = db.trial("asha_00002", {});
  CHECK(t["results"].size() == 3);
  CHECK(t["events"].size() >= 2);
  CHECK(t["events"].back()["to"] == "TERMINATED");
  CHECK(t["checkpoints"].size() == 1);
  REQUIRE(t["logs"].size() == 1);
  CHECK(t["logs"][0]["tail"].get<std::string>().find("starting asha_00002") != std::string::npos);
  CHECK_THROWS_AS(db.trial("nope", {}), NotFound);
}

TEST_CASE(
    "scheduler: ASHA rungs lowest first with the (1 - 1/rf) quantile as cut-off, and the "
    "exploits") {
  DashboardDir runs;
  const Json s = ExperimentDb::open(write_experiment(runs.path(), "asha")).scheduler();
  CHECK(s["type"] == "asha");
  const Json rungs = s["asha"][0]["rungs"];
  REQUIRE(rungs.size() == 3);
  CHECK(rungs[0]["milestone"] == 1.0);
  CHECK(rungs[0]["recorded"].size() == 12);
  CHECK(rungs[2]["recorded"].size() == 8);
  // Every third trial stopped at 3: the others reached the top rung.
  CHECK(rungs[0]["num_reached"] == 12);
  CHECK(rungs[2]["num_reached"] == 8);
  CHECK(rungs[0]["cutoff"].is_number());
  REQUIRE(s["exploits"].size() == 1);
  // The mutation is from the donor's config (trial 0's lr), not the
  // recipient's old one (0.1).
  const Json donor = ExperimentDb::open(runs.path() / "asha").trial("asha_00000", {})["config"];
  CHECK(s["exploits"][0]["mutation"]["lr"] == Json::array({donor["lr"], 0.12}));
  CHECK(donor["lr"] != 0.1);
  CHECK(s["exploits"][0]["donor_index"] == 0);
}

TEST_CASE(
    "scheduler: asynchronous HyperBand shows ASHA's rungs over HyperBand's brackets, cut at "
    "eta's quantile") {
  DashboardDir runs;
  const Json s = ExperimentDb::open(test::write_async_hyperband(runs.path(), "async")).scheduler();
  CHECK(s["type"] == "hyperband");
  CHECK_FALSE(s.contains("hyperband"));
  REQUIRE(s["asha"].size() == 3);  // first milestones 1, 3 and 9
  CHECK(s["asha"][0]["rungs"].size() == 3);
  const Json lowest = s["asha"][0]["rungs"][0];
  CHECK(lowest["milestone"] == 1.0);
  std::vector<double> values;
  for (const Json& entry : lowest["recorded"]) values.push_back(entry[1].get<double>());
  REQUIRE(values.size() == 4);
  std::sort(values.begin(), values.end());
  // eta = 3: the 2/3 quantile of four values is the third, where ASHA's
  // default reduction factor of 4 would cut a quarter of the way past it.
  CHECK(lowest["cutoff"].get<double>() == doctest::Approx(values[2]));
}

TEST_CASE(
    "scheduler: each ASHA value with the cut-off it met on arrival and whether it fell below") {
  DashboardDir runs;
  const Json s = ExperimentDb::open(write_experiment(runs.path(), "asha")).scheduler();
  const Json recorded = s["asha"][0]["rungs"][0]["recorded"];
  REQUIRE(recorded.size() == 12);
  CHECK(recorded[0][2].is_null());          // the first had nothing to beat
  CHECK(recorded[1][2] == recorded[0][1]);  // the second, the first's value
  for (const Json& entry : recorded) {
    CHECK(entry[3] == (entry[2].is_number() && entry[1] < entry[2]));
  }
}

TEST_CASE("scheduler: HyperBand's history says who reached each milestone, went on, was cut") {
  DashboardDir runs;
  const Json s = ExperimentDb::open(test::write_hyperband(runs.path(), "hb")).scheduler();
  REQUIRE(s["hyperband"].size() == 2);
  const Json first = s["hyperband"][0];
  CHECK(first["milestones"] == Json::array({9.0}));
  CHECK(first["history"][0]["finished"] == Json::array({"hb_h0", "hb_h1", "hb_h2"}));
  const Json second = s["hyperband"][1];
  CHECK(second["n0"] == 5);
  CHECK(second["milestones"] == Json::array({3.0, 9.0}));
  const Json at_3 = second["history"][0];
  CHECK(at_3["reached"].size() == 5);
  CHECK(at_3["went_on"] == Json::array({"hb_h3", "hb_h4"}));
  CHECK(at_3["cut"] == Json::array({"hb_h5", "hb_h6", "hb_h7"}));
  CHECK(second["history"][1]["finished"] == Json::array({"hb_h3", "hb_h4"}));
  CHECK(second["history"][1]["cut"].empty());
  // The trial table words a cut and a finish as the scheduler did.
  const Json trials = ExperimentDb::open(runs.path() / "hb").trials();
  CHECK(trials[5]["reason"].get<std::string>().find("at milestone 3: score 0.3 ranked 3 of 5") !=
        std::string::npos);
  CHECK(trials[3]["reason"].get<std::string>().find("finished at its last milestone 9") !=
        std::string::npos);
}

// runs/two: error = x^2 and cost = (x-1)^2, both minimised: x in [0, 1]
// is the front, x > 1 is dominated by x = 1, and x > 2 breaks the
// constraint x - 2 <= 0; trial 6 lacks the second objective.
std::filesystem::path write_two_objectives(const std::filesystem::path& runs) {
  const auto dir = runs / "two";
  auto store = storage::ExperimentStore::open(dir);
  store.put_experiment({.name = "two",
                        .metric = "error",
                        .mode = Mode::kMin,
                        .created_at = 1000,
                        .status = ExperimentStatus::kFinished,
                        .objectives = {{"error", Mode::kMin}, {"cost", Mode::kMin}}});
  const std::vector<double> xs = {0.0, 0.5, 1.0, 1.5, 2.5, 3.0};
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string id = fmt::format("two_{:05d}", i);
    const double x = xs[i];
    store.put_trial({.trial_id = id,
                     .trial_index = static_cast<int64_t>(i),
                     .config = {{"x", x}},
                     .status = TrialStatus::kTerminated,
                     .created_at = 1000.0 + static_cast<double>(i)});
    store.append_result(
        {.trial_id = id,
         .training_iteration = 1,
         .timestamp = 1001,
         .metrics = {{"error", x * x}, {"cost", (x - 1) * (x - 1)}, {"constraints", x - 2}}});
  }
  // A trial without the second objective has no point.
  store.put_trial({.trial_id = "two_00006", .trial_index = 6, .config = {{"x", 9}}});
  store.append_result(
      {.trial_id = "two_00006", .training_iteration = 1, .metrics = {{"error", 0.1}}});
  store.flush();
  return dir;
}

TEST_CASE("front: each trial's objectives, the Pareto front ranked, infeasible ones marked") {
  DashboardDir runs;
  const auto dir = write_two_objectives(runs.path());
  const Json front = ExperimentDb::open(dir).front();
  REQUIRE(front["objectives"].size() == 2);
  CHECK(front["objectives"][1] == Json{{"metric", "cost"}, {"mode", "min"}});
  const Json& points = front["points"];
  REQUIRE(points.size() == 6);
  CHECK(points[1]["values"] == Json::array({0.25, 0.25}));
  for (int i : {0, 1, 2}) {
    CHECK(points[i]["rank"] == 0);
    CHECK(points[i]["feasible"] == true);
  }
  CHECK(points[3]["rank"] == 1);  // x = 1.5, behind x = 1
  for (int i : {4, 5}) {
    CHECK(points[i]["feasible"] == false);
    CHECK(points[i]["rank"].is_null());
  }
}

TEST_CASE("summary: every objective with its own best, feasible trials only") {
  DashboardDir runs;
  const Json s = ExperimentDb::open(write_two_objectives(runs.path())).summary();
  REQUIRE(s["objectives"].size() == 2);
  CHECK(s["objectives"][0]["metric"] == "error");
  CHECK(s["objectives"][0]["best"]["trial_id"] == "two_00000");  // x = 0
  CHECK(s["objectives"][1]["metric"] == "cost");
  CHECK(s["objectives"][1]["best"]["trial_id"] == "two_00002");  // x = 1
  CHECK(s["metrics"][0] == "error");
  CHECK(s["metrics"][1] == "cost");
}

TEST_CASE("front: one objective has no points") {
  DashboardDir runs;
  const Json front = ExperimentDb::open(write_experiment(runs.path(), "asha")).front();
  CHECK(front["objectives"].size() == 1);
  CHECK(front["points"].empty());
}

TEST_CASE("an experiment whose every trial failed is FAILED, with no best trial") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "broken", 3, 2);
  {
    auto store = storage::ExperimentStore::open(dir);
    for (int i = 0; i < 3; ++i) {
      store.set_trial_status(fmt::format("broken_{:05d}", i), TrialStatus::kError, "boom", 1100);
    }
    store.flush();
  }
  const Json s = ExperimentDb::open(dir).summary();
  CHECK(s["status"] == "FAILED");
  CHECK(s["status_note"] == "every trial failed");
  CHECK(s["best"].is_null());
}

TEST_CASE("a copied experiment folder reads its own trials' logs, shown relative to it") {
  DashboardDir runs;
  write_experiment(runs.path(), "asha", 3, 2);
  std::filesystem::copy(runs.path() / "asha", runs.path() / "copy",
                        std::filesystem::copy_options::recursive);
  std::ofstream(runs.path() / "copy" / "trials" / "asha_00001" / "rank_0.log") << "the copy\n";
  const Json t = ExperimentDb::open(runs.path() / "copy").trial("asha_00001", {});
  CHECK(t["trial_dir"] == "trials/asha_00001");
  REQUIRE(t["logs"].size() == 1);
  CHECK(t["logs"][0]["tail"] == "the copy\n");
}

TEST_CASE("fingerprint changes with a new result and only then") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  const std::string before = ExperimentDb::open(dir).fingerprint();
  CHECK(ExperimentDb::open(dir).fingerprint() == before);
  {
    auto store = storage::ExperimentStore::open(dir);
    store.append_result(
        {.trial_id = "asha_00000", .training_iteration = 10, .metrics = {{"accuracy", 0.5}}});
    store.flush();
  }
  CHECK(ExperimentDb::open(dir).fingerprint() != before);
}

TEST_CASE("a missing or corrupt database is a StorageError naming the file") {
  DashboardDir runs;
  CHECK_THROWS_WITH_AS(ExperimentDb::open(runs.path() / "none"),
                       doctest::Contains("no experiment database"), StorageError);
  std::filesystem::create_directories(runs.path() / "bad");
  std::ofstream(runs.path() / "bad" / "experiment.db")
      << "this is not sqlite, just text long enough to be a header....";
  CHECK_THROWS_WITH_AS(ExperimentDb::open(runs.path() / "bad"),
                       doctest::Contains("bad/experiment.db"), StorageError);
}

// Every answer of the dashboard on `dir`, but the fingerprint.
Json answers(const std::filesystem::path& dir) {
  const auto db = ExperimentDb::open(dir);
  Json summary = db.summary();
  summary.erase("fingerprint");
  const auto [budget, points] = db.points_at_one_budget(db.objective().first, 2);
  Json at_budget = Json::array();
  for (const TrialPoint& p : points) at_budget.push_back({p.trial_id, p.last_metrics});
  return {{"summary", summary},
          {"trials", db.trials()},
          {"page", db.trial_page(2, 5)},
          {"curves", db.curves(db.objective().first, {.max_curve_trials = 3})},
          {"other curves", db.curves("loss", {.max_curve_trials = 3})},
          {"scheduler", db.scheduler()},
          {"front", db.front()},
          {"budget", budget},
          {"at budget", at_budget}};
}

TEST_CASE("a version 3 database, without the kept last results, answers as a new one does") {
  DashboardDir runs;
  for (const auto& dir :
       {write_experiment(runs.path(), "asha"), write_two_objectives(runs.path())}) {
    CAPTURE(dir);
    const Json fresh = answers(dir);
    CHECK(fresh["summary"]["best"].is_object());
    {
      test::Sql sql(dir / "experiment.db", SQLITE_OPEN_READWRITE);
      test::make_version_3(sql);
    }
    const Json old = answers(dir);
    for (const auto& [key, value] : fresh.items()) {
      CAPTURE(key);
      CHECK(old[key] == value);
    }
  }
}

TEST_CASE("thin keeps at most max indices, evenly, always the last") {
  CHECK(thin(5, 10) == std::vector<size_t>{0, 1, 2, 3, 4});
  CHECK(thin(10, 4) == std::vector<size_t>{0, 3, 6, 9});
  CHECK(thin(0, 4).empty());
  CHECK(flatten(Json{{"a", {{"b", 1}}}, {"c", 2}}) == Json{{"a.b", 1}, {"c", 2}});
}

}  // namespace
}  // namespace tune::dashboard
