// CheckpointManager: publish, retention, PBT's clone and rewind, and lookup
// on resume, checked on disk and in the store.
#include "storage/checkpoint_manager.h"

#include <doctest/doctest.h>

#include <fstream>

#include "core/errors.h"
#include "storage/checkpoint_layout.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace tune;
using namespace tune::storage;

namespace {

struct Fixture {
  test::TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  fs::path trial_dir = dir.path() / "trials" / "exp_00000";

  Fixture() {
    for (int i = 0; i < 2; ++i) {
      TrialRecord t;
      t.trial_id = i == 0 ? "exp_00000" : "exp_00001";
      t.trial_index = i;
      t.config = Json::object();
      store.put_trial(t);
    }
  }
  // What a rank's report() leaves for the controller to publish.
  void stage(const fs::path& trial, int64_t iteration, const std::string& text) {
    fs::create_directories(staging_dir(trial, iteration));
    std::ofstream(staging_dir(trial, iteration) / "state.txt") << text;
  }
  std::vector<int64_t> kept(const TrialCheckpoints& c) {
    std::vector<int64_t> out;
    for (const auto& e : c.kept) out.push_back(e.iteration);
    return out;
  }
};

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  return text;
}

}  // namespace

TEST_CASE("publish keeps the latest and the best num_to_keep - 1 by score") {
  Fixture f;
  CheckpointManager manager(f.store, {.num_to_keep = 2, .score_attribute = "acc"});
  TrialCheckpoints c;
  const double accs[] = {0.5, 0.9, 0.1, 0.3};
  for (int64_t i = 1; i <= 4; ++i) {
    f.stage(f.trial_dir, i, std::to_string(i));
    manager.publish("exp_00000", f.trial_dir, c, i,
                    {{"acc", accs[i - 1]}, {"time_total_s", i * 2.0}}, 100.0 + i);
  }
  CHECK(f.kept(c) == std::vector<int64_t>{2, 4});  // best (0.9) and latest
  CHECK(c.latest == 4);
  CHECK(c.latest_time_total_s == 8.0);
  CHECK(fs::is_directory(checkpoint_dir(f.trial_dir, 2)));
  CHECK_FALSE(fs::exists(checkpoint_dir(f.trial_dir, 1)));
  CHECK_FALSE(fs::exists(checkpoint_dir(f.trial_dir, 3)));
  CHECK(read(checkpoint_dir(f.trial_dir, 4) / "state.txt") == "4");
  CHECK(f.store.checkpoints("exp_00000").size() == 2);
}

TEST_CASE("publish without staged files fails with the path, leaving the others") {
  Fixture f;
  CheckpointManager manager(f.store, {});
  TrialCheckpoints c;
  f.stage(f.trial_dir, 1, "one");
  manager.publish("exp_00000", f.trial_dir, c, 1, Json::object(), 1);
  CHECK_THROWS_WITH_AS(manager.publish("exp_00000", f.trial_dir, c, 2, Json::object(), 2),
                       doctest::Contains("checkpoint_000002"), Error);
  CHECK(c.latest == 1);
  CHECK(f.store.checkpoints("exp_00000").size() == 1);
}

TEST_CASE("clone copies the donor's latest, an earlier one rewinds the recipient") {
  Fixture f;
  CheckpointManager manager(f.store, {});
  const fs::path donor_dir = f.dir.path() / "trials" / "exp_00001";
  TrialCheckpoints donor, mine;
  f.stage(donor_dir, 2, "donor 2");
  manager.publish("exp_00001", donor_dir, donor, 2, Json::object(), 1);
  for (int64_t i = 1; i <= 3; ++i) {
    f.stage(f.trial_dir, i, "mine");
    manager.publish("exp_00000", f.trial_dir, mine, i, Json::object(), 1);
    f.store.append_result({"exp_00000", i, 1.0, 1.0, 1.0 * i, {{"loss", 1.0}}});
  }
  const int64_t at =
      manager.clone("exp_00001", donor_dir, donor, "exp_00000", f.trial_dir, mine, 3, 5.0);
  CHECK(at == 2);
  CHECK(mine.latest == 2);
  CHECK(f.kept(mine) == std::vector<int64_t>{1, 2});
  CHECK(read(checkpoint_dir(f.trial_dir, 2) / "state.txt") == "donor 2");
  CHECK_FALSE(fs::exists(checkpoint_dir(f.trial_dir, 3)));
  CHECK(f.store.results("exp_00000").size() == 2);  // iteration 3's branch is gone
  const auto rows = f.store.checkpoints("exp_00000");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].source == "clone of exp_00001");
}

TEST_CASE("a clone whose donor checkpoint is gone fails with an error, not a crash") {
  Fixture f;
  CheckpointManager manager(f.store, {});
  const fs::path donor_dir = f.dir.path() / "trials" / "exp_00001";
  TrialCheckpoints donor, mine;
  f.stage(donor_dir, 1, "donor");
  manager.publish("exp_00001", donor_dir, donor, 1, Json::object(), 1);
  fs::remove_all(checkpoint_dir(donor_dir, 1));
  CHECK_THROWS_AS(
      manager.clone("exp_00001", donor_dir, donor, "exp_00000", f.trial_dir, mine, 0, 2.0), Error);
  CHECK(mine.latest == 0);
}

TEST_CASE("load finds the checkpoints whose directories exist, with their times") {
  Fixture f;
  CheckpointManager manager(f.store, {});
  TrialCheckpoints c;
  for (int64_t i = 1; i <= 3; ++i) {
    f.stage(f.trial_dir, i, "x");
    manager.publish("exp_00000", f.trial_dir, c, i, Json::object(), 1);
    f.store.append_result({"exp_00000", i, 1.0, 1.0, 10.0 * i, {{"loss", 1.0}}});
  }
  fs::remove_all(checkpoint_dir(f.trial_dir, 3));  // a crash between delete and commit
  const TrialCheckpoints loaded = manager.load("exp_00000", f.store.results("exp_00000"));
  CHECK(f.kept(loaded) == std::vector<int64_t>{1, 2});
  CHECK(loaded.latest == 2);
  CHECK(loaded.latest_time_total_s == 20.0);
}
