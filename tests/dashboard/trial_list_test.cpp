// The trial table's server-side pages and the charts' sample with its
// changes since a fingerprint (dashboard/trial_list.cpp), through the Api
// the server calls, and the answers' tags (304 when nothing changed).
#include <doctest/doctest.h>
#include <httplib.h>

#include <thread>

#include "dashboard/api.h"
#include "dashboard/server.h"
#include "fixture.h"

namespace tune::dashboard {
namespace {

using test::write_experiment;

std::vector<std::string> ids_of(const Json& rows) {
  std::vector<std::string> out;
  for (const Json& t : rows) out.push_back(t["trial_id"]);
  return out;
}

void add_result(const std::filesystem::path& dir, const std::string& id, int iteration,
                double accuracy) {
  auto store = storage::ExperimentStore::open(dir);
  store.append_result({.trial_id = id,
                       .training_iteration = iteration,
                       .timestamp = 2000,
                       .metrics = {{"accuracy", accuracy}, {"loss", 1 - accuracy}}});
  store.flush();
}

TEST_CASE("the charts' sample: every trial up to its size, else every k-th and the best") {
  test::ScratchDir runs;
  write_experiment(runs.path(), "small", 5, 2);
  Api all({.root = runs.path()});
  CHECK(all.get("exp/small/sample")["trials"].size() == 5);
  const auto dir = write_experiment(runs.path(), "asha", 25, 3);
  Api api({.root = runs.path(), .limits = {.max_chart_trials = 6}});
  const Json sample = api.get("exp/asha/sample");
  CHECK(sample["total"] == 25);
  CHECK(sample["stride"] == 5);  // ceil(25 / 6)
  CHECK(sample["full"] == true);
  const std::string best = api.get("exp/asha/summary")["best"]["trial_id"];
  CHECK(best == "asha_00012");  // not a fifth: drawn as the best
  CHECK(ids_of(sample["trials"]) == std::vector<std::string>{"asha_00000", "asha_00005",
                                                             "asha_00010", "asha_00012",
                                                             "asha_00015", "asha_00020"});
  CHECK(sample["trials"][1] == api.get("exp/asha/trials")[5]);  // whole rows
}

TEST_CASE("a live page's changes: only the sampled rows that changed, else the whole sample") {
  test::ScratchDir runs;
  const auto dir = write_experiment(runs.path(), "asha", 25, 3);
  Api api({.root = runs.path(), .limits = {.max_chart_trials = 6}});
  const Json first = api.get("exp/asha/sample");
  auto since = [&](const Json& answer) {
    return api.get("exp/asha/sample", {{"since", answer["fingerprint"]},
                                       {"stride", std::to_string(answer["stride"].get<int>())}});
  };
  const Json none = since(first);
  CHECK(none["full"] == false);
  CHECK(none["trials"].empty());
  CHECK(none["fingerprint"] == first["fingerprint"]);

  add_result(dir, "asha_00005", 4, 0.3);  // sampled
  add_result(dir, "asha_00006", 4, 0.3);  // not sampled, not the best
  const Json changed = since(first);
  CHECK(changed["full"] == false);
  REQUIRE(ids_of(changed["trials"]) == std::vector<std::string>{"asha_00005"});
  CHECK(changed["trials"][0]["iteration"] == 4);
  CHECK(changed["trials"][0]["metrics"]["accuracy"] == 0.3);
  CHECK(since(changed)["trials"].empty());

  // A trial that becomes the best is sent wherever it is.
  add_result(dir, "asha_00007", 4, 2.0);
  CHECK(ids_of(since(changed)["trials"]) == std::vector<std::string>{"asha_00007"});

  // Another stride (more trials), an exploit, or a foreign fingerprint: the whole sample.
  CHECK(api.get("exp/asha/sample", {{"since", "junk"}, {"stride", "5"}})["full"] == true);
  CHECK(api.get("exp/asha/sample", {{"since", changed["fingerprint"]}, {"stride", "4"}})["full"] ==
        true);
  {
    auto store = storage::ExperimentStore::open(dir);
    store.add_exploit({.trial_id = "asha_00003",
                       .donor_id = "asha_00012",
                       .training_iteration = 3,
                       .donor_iteration = 3,
                       .old_config = {{"lr", 0.1}},
                       .new_config = {{"lr", 0.2}},
                       .at = 3000});
    store.flush();
  }
  const Json after_exploit = since(changed);
  CHECK(after_exploit["full"] == true);
  CHECK(after_exploit["trials"].size() == 6);
}

TEST_CASE("the trial table sorts and filters every trial on the server, a page at a time") {
  test::ScratchDir runs;
  write_experiment(runs.path(), "asha", 25, 5);
  Api api({.root = runs.path()});
  const Json by_accuracy =
      api.get("exp/asha/trials",
              {{"offset", "0"}, {"limit", "3"}, {"sort", "metric.accuracy"}, {"desc", "1"}});
  CHECK(by_accuracy["total"] == 25);
  REQUIRE(by_accuracy["trials"].size() == 3);
  CHECK(by_accuracy["trials"][0]["trial_id"] == "asha_00012");
  double previous = 2;
  for (const Json& t : by_accuracy["trials"]) {
    CHECK(t["metrics"]["accuracy"].get<double>() <= previous);
    previous = t["metrics"]["accuracy"];
  }
  // Another metric is read from the last result's JSON: lowest loss is highest accuracy.
  const Json by_loss =
      api.get("exp/asha/trials", {{"offset", "0"}, {"limit", "1"}, {"sort", "metric.loss"}});
  CHECK(by_loss["trials"][0]["trial_id"] == "asha_00012");
  const Json by_iteration =
      api.get("exp/asha/trials", {{"offset", "0"}, {"limit", "1"}, {"sort", "iteration"}});
  CHECK(by_iteration["trials"][0]["trial_id"] == "asha_00002");  // the first one cut at 3
  // Every trial once across the pages, in the order asked.
  std::vector<std::string> seen;
  for (int offset = 0; offset < 25; offset += 10) {
    const Json page =
        api.get("exp/asha/trials",
                {{"offset", std::to_string(offset)}, {"limit", "10"}, {"sort", "config.layers"}});
    for (const Json& t : page["trials"]) seen.push_back(t["trial_id"]);
  }
  CHECK(seen.size() == 25);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 25);
  CHECK(seen[0] == "asha_00000");  // layers 1, the first by creation among them
  CHECK(seen[1] == "asha_00004");
  // Nested config keys by their flattened names.
  CHECK(api.get("exp/asha/trials", {{"offset", "0"}, {"sort", "config.opt.momentum"}})["total"] ==
        25);
  // The filter: any text of the row, in any case; the total is what matches.
  const Json stopped =
      api.get("exp/asha/trials", {{"offset", "0"}, {"filter", "RUNG"}, {"sort", "index"}});
  CHECK(stopped["total"] == 7);  // every third trial stopped at a rung, but the older reason
  const Json one = api.get("exp/asha/trials", {{"offset", "0"}, {"filter", "asha_00017"}});
  CHECK(ids_of(one["trials"]) == std::vector<std::string>{"asha_00017"});
  CHECK_THROWS_AS(api.get("exp/asha/trials", {{"offset", "0"}, {"sort", "nonsense"}}), NotFound);
}

TEST_CASE("an answer that did not change comes back as 304 with its tag, a changed one as 200") {
  test::ScratchDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  Api api({.root = runs.path()});
  DashboardServer server(api, {.port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.serve(); });
  httplib::Client client("127.0.0.1", port);
  auto first = client.Get("/api/exp/asha/summary");
  REQUIRE(first);
  CHECK(first->status == 200);
  const std::string tag = first->get_header_value("ETag");
  CHECK(!tag.empty());
  CHECK(first->get_header_value("Cache-Control") == "no-cache");
  auto again = client.Get("/api/exp/asha/summary", {{"If-None-Match", tag}});
  REQUIRE(again);
  CHECK(again->status == 304);
  CHECK(again->body.empty());
  add_result(dir, "asha_00000", 10, 0.5);
  auto changed = client.Get("/api/exp/asha/summary", {{"If-None-Match", tag}});
  REQUIRE(changed);
  CHECK(changed->status == 200);
  CHECK(changed->get_header_value("ETag") != tag);
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace tune::dashboard
