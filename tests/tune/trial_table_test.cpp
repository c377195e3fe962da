// TrialTable, the only writer of trial status: timestamps and trial_events
// as a user reads them in SQL, without processes.
#include "tune/execution/trial_table.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "core/errors.h"
#include "sqlite_query.h"
#include "test_util.h"

using namespace tune;

namespace {

struct Fixture {
  test::ScratchDir dir;
  storage::ExperimentStore store = storage::ExperimentStore::open(dir.path());
  TrialTable table{store};

  std::vector<std::vector<std::string>> events(const std::string& id) {
    store.flush();
    return test::query(store.path(),
                       "SELECT at, coalesce(from_status, '-'), to_status FROM trial_events "
                       "WHERE trial_id = '" +
                           id + "' ORDER BY id");
  }
  storage::TrialRecord row(const std::string& id) {
    for (const auto& r : store.trials()) {
      if (r.trial_id == id) return r;
    }
    throw Error("no row for " + id);
  }
};

int64_t row_count(Fixture& f, const std::string& table) {
  f.store.flush();
  return std::stoll(test::query(f.store.path(), "SELECT count(*) FROM " + table)[0][0]);
}

}  // namespace

TEST_CASE("started_at is the first start, pauses and resumes keep it") {
  Fixture f;
  f.store.put_experiment({"exp", "loss", Mode::kMin, Json::object(), 1});
  Trial& t = f.table.create("exp_00000", 0, {{"x", 1}}, f.dir.path() / "t", 10);
  f.table.transition(t, TrialPhase::kRunning, "started", 11);
  f.table.transition(t, TrialPhase::kPausing, "paused by PBT", 12);
  f.table.transition(t, TrialPhase::kPaused, "paused by PBT", 13);
  CHECK_FALSE(f.row("exp_00000").finished_at);  // paused is not finished
  f.table.transition(t, TrialPhase::kRunning, "resumed", 14);
  f.table.transition(t, TrialPhase::kStopping, "max_t", 15);
  f.table.transition(t, TrialPhase::kTerminated, "max_t", 16);
  const auto r = f.row("exp_00000");
  CHECK(r.started_at == 11.0);
  CHECK(r.finished_at == 16.0);
  CHECK(r.status_reason == "max_t");
  // Phases inside a run (PAUSING, STOPPING) are not status changes.
  CHECK(f.events("exp_00000") ==
        std::vector<std::vector<std::string>>{{"10.0", "-", "PENDING"},
                                              {"11.0", "PENDING", "RUNNING"},
                                              {"13.0", "RUNNING", "PAUSED"},
                                              {"14.0", "PAUSED", "RUNNING"},
                                              {"16.0", "RUNNING", "TERMINATED"}});
}

TEST_CASE("a retried failure clears finished_at, reasons alone write no event") {
  Fixture f;
  Trial& t = f.table.create("exp_00001", 1, Json::object(), f.dir.path() / "t", 10);
  f.table.set_reason(t, "waiting for resources");
  f.table.set_reason(t, "waiting: max_concurrent_trials=1 reached");
  f.table.transition(t, TrialPhase::kRunning, "started", 11);
  f.table.transition(t, TrialPhase::kFailing, "rank 0 exited with code 1", 12);
  f.table.transition(t, TrialPhase::kPending, "restarting after failure 1", 13);
  CHECK_FALSE(f.row("exp_00001").finished_at);
  f.table.transition(t, TrialPhase::kRunning, "started (attempt 1)", 14);
  f.table.transition(t, TrialPhase::kFailing, "boom", 15);
  f.table.transition(t, TrialPhase::kError, "boom", 16);
  CHECK(f.row("exp_00001").started_at == 11.0);
  CHECK(f.row("exp_00001").finished_at == 16.0);
  for (const auto& e : f.events("exp_00001")) CHECK(e[1] != e[2]);  // no X -> X events
  CHECK(f.events("exp_00001").size() == 5);  // created, RUNNING, PENDING, RUNNING, ERROR
}

TEST_CASE("a forbidden transition is refused and changes nothing") {
  Fixture f;
  Trial& t = f.table.create("exp_00002", 2, Json::object(), f.dir.path() / "t", 10);
  CHECK_THROWS_WITH_AS(f.table.transition(t, TrialPhase::kPaused, "x", 11),
                       doctest::Contains("cannot go from PENDING to PAUSED"), Error);
  CHECK(t.phase == TrialPhase::kPending);
  CHECK(f.table.count(TrialStatus::kPending) == 1);
}

TEST_CASE("the index by status follows every change, waiting trials in creation order") {
  Fixture f;
  std::vector<Trial*> trials;
  for (int i = 0; i < 4; ++i) {
    trials.push_back(
        &f.table.create(fmt::format("exp_{:05d}", i), i, Json::object(), f.dir.path() / "t", 10));
  }
  f.table.transition(*trials[0], TrialPhase::kRunning, "started", 11);
  f.table.transition(*trials[0], TrialPhase::kPausing, "pbt", 12);
  f.table.transition(*trials[0], TrialPhase::kPaused, "pbt", 13);
  f.table.transition(*trials[2], TrialPhase::kRunning, "started", 11);
  CHECK(f.table.count(TrialStatus::kPending) == 2);
  CHECK(f.table.count(TrialStatus::kPaused) == 1);
  CHECK(f.table.count(TrialStatus::kRunning) == 1);
  std::vector<std::string> waiting;
  for (Trial* t : f.table.waiting()) waiting.push_back(t->id);
  CHECK(waiting == std::vector<std::string>{"exp_00000", "exp_00001", "exp_00003"});
  CHECK_FALSE(f.table.all_finished());
}

TEST_CASE("finished trials retire: counts stay, only those with a checkpoint can still be found") {
  Fixture f;
  std::vector<Trial*> trials;
  for (int i = 0; i < 3; ++i) {
    trials.push_back(
        &f.table.create(fmt::format("exp_{:05d}", i), i, Json{{"x", i}}, f.dir.path() / "t", 10));
    f.table.transition(*trials.back(), TrialPhase::kRunning, "started", 11);
  }
  trials[1]->checkpoints.latest = 4;  // a PBT donor-to-be
  f.table.transition(*trials[0], TrialPhase::kTerminated, "done", 12);
  f.table.transition(*trials[1], TrialPhase::kTerminated, "done", 12);
  CHECK(f.table.find("exp_00000") != nullptr);  // nothing retires before the call
  const std::vector<Trial> retired = f.table.retire_finished();
  REQUIRE(retired.size() == 2);
  CHECK(retired[0].config == Json{{"x", 0}});  // whole, for a last look
  CHECK(f.table.size() == 3);
  CHECK(f.table.count(TrialStatus::kTerminated) == 2);
  CHECK(f.table.count(TrialStatus::kRunning) == 1);
  CHECK(f.table.find("exp_00000") == nullptr);
  const Trial* donor = f.table.find("exp_00001");
  REQUIRE(donor != nullptr);
  CHECK(donor->checkpoints.latest == 4);
  CHECK(donor->dir == f.dir.path() / "t");
  int live = 0;
  f.table.for_each([&](const Trial&) { ++live; });
  CHECK(live == 1);
  CHECK(f.table.retire_finished().empty());
  CHECK_FALSE(f.table.all_finished());
  f.table.transition(*trials[2], TrialPhase::kFailing, "failing", 13);
  f.table.transition(*trials[2], TrialPhase::kError, "failed", 13);
  CHECK(f.table.retire_finished().size() == 1);
  CHECK(f.table.all_finished());
  CHECK(f.table.count(TrialStatus::kError) == 1);
  CHECK(row_count(f, "trials") == 3);  // the store keeps every one
}
