// The HTTP server end to end over loopback, with cpp-httplib's client.
#include "dashboard/server.h"

#include <doctest/doctest.h>
#include <httplib.h>

#include <fstream>
#include <thread>

#include "dashboard/report.h"
#include "fixture.h"

namespace tune::dashboard {
namespace {

using DashboardDir = test::ScratchDir;
using test::write_experiment;

// A server on a free loopback port, serving until the test ends.
class Running {
 public:
  Running(const std::filesystem::path& root, std::string token = "", std::string host = "127.0.0.1")
      : api_({.root = root}),
        server_(api_, {.host = std::move(host), .port = 0, .token = std::move(token)}) {
    port_ = server_.bind();
    thread_ = std::thread([this] { server_.serve(); });
  }
  ~Running() {
    server_.stop();
    thread_.join();
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", port_); }

 private:
  Api api_;
  DashboardServer server_;
  int port_ = 0;
  std::thread thread_;
};

// The status of GET `path`; -1 when no answer came.
int status_of(httplib::Client& client, const std::string& path,
              const httplib::Headers& headers = {}) {
  auto res = client.Get(path.c_str(), headers);
  return res ? res->status : -1;
}

TEST_CASE(
    "the server lists experiments, answers every endpoint, and shows a broken database as an "
    "error") {
  DashboardDir runs;
  write_experiment(runs.path(), "asha");
  write_experiment(runs.path(), "other", 3, 2);
  std::filesystem::create_directories(runs.path() / "broken");
  std::ofstream(runs.path() / "broken" / "experiment.db") << std::string(200, 'x');
  Running server(runs.path());
  auto client = server.client();

  auto page = client.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->body.find("static/chart.js") != std::string::npos);
  auto chart = client.Get("/static/chart.js");
  REQUIRE(chart);
  CHECK(chart->body.find("Chart.js v3") != std::string::npos);

  auto list = client.Get("/api/experiments");
  REQUIRE(list);
  const Json experiments = Json::parse(list->body);
  REQUIRE(experiments.size() == 3);
  CHECK(experiments[0]["name"] == "asha");
  CHECK(experiments[0]["num_trials"] == 12);
  CHECK(experiments[1]["name"] == "broken");
  CHECK(experiments[1]["error"].get<std::string>().find("broken/experiment.db") !=
        std::string::npos);

  for (const char* path : {"summary", "trials", "curves?metric=loss", "scheduler", "importance",
                           "trial/asha_00003", "version"}) {
    CHECK_MESSAGE(status_of(client, std::string("/api/exp/asha/") + path) == 200, path);
  }
  // Asynchronous HyperBand's state is ASHA's, not synchronous HyperBand's.
  test::write_async_hyperband(runs.path(), "async");
  CHECK(status_of(client, "/api/exp/async/scheduler") == 200);
  auto broken = client.Get("/api/exp/broken/summary");
  REQUIRE(broken);
  CHECK(broken->status == 500);
  CHECK(Json::parse(broken->body).contains("error"));
  CHECK(status_of(client, "/api/exp/nope/summary") == 404);
  CHECK(status_of(client, "/api/exp/../summary") == 404);
  // Read-only: nothing but GET is routed.
  auto post = client.Post("/api/exp/asha/summary", "{}", "application/json");
  REQUIRE(post);
  CHECK(post->status >= 400);
  // Still serving after all that.
  CHECK(status_of(client, "/api/exp/asha/version") == 200);
}

TEST_CASE("with a token, requests without it get 403, and the token in the URL sets a cookie") {
  DashboardDir runs;
  write_experiment(runs.path(), "asha", 3, 2);
  Running server(runs.path(), "s3cret");
  auto client = server.client();
  CHECK(status_of(client, "/api/experiments") == 403);
  auto page = client.Get("/?token=s3cret");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->get_header_value("Set-Cookie").find("tunerun_token=s3cret") != std::string::npos);
  CHECK(status_of(client, "/api/experiments", {{"Cookie", "tunerun_token=s3cret"}}) == 200);
  CHECK(status_of(client, "/api/experiments", {{"Authorization", "token s3cret"}}) == 200);
  CHECK(status_of(client, "/api/experiments", {{"Authorization", "token wrong"}}) == 403);
  CHECK(DashboardServer::make_token().size() == 48);
}

TEST_CASE("a Host other than the bound address is refused: no DNS rebinding reads the runs") {
  DashboardDir runs;
  write_experiment(runs.path(), "asha", 3, 2);
  Running server(runs.path());
  auto client = server.client();
  CHECK(status_of(client, "/api/experiments") == 200);  // Host: 127.0.0.1:PORT
  CHECK(status_of(client, "/api/experiments", {{"Host", "localhost:8265"}}) == 200);
  CHECK(status_of(client, "/api/experiments", {{"Host", "[::1]:8265"}}) == 200);
  CHECK(status_of(client, "/api/experiments", {{"Host", "attacker.example:8265"}}) == 403);
  CHECK(status_of(client, "/", {{"Host", "attacker.example"}}) == 403);

  // Bound to every interface, any name reaches it, and the token guards it.
  Running open(runs.path(), "s3cret", "0.0.0.0");
  auto other = open.client();
  CHECK(status_of(other, "/api/experiments", {{"Host", "box.example:8265"}}) == 403);
  CHECK(status_of(other, "/api/experiments",
                  {{"Host", "box.example:8265"}, {"Authorization", "token s3cret"}}) == 200);
}

TEST_CASE("the answer cache stays within its entries and bytes over many distinct queries") {
  DashboardDir runs;
  write_experiment(runs.path(), "asha");
  write_experiment(runs.path(), "other", 3, 2);
  Api api({.root = runs.path(), .cache_entries = 16, .cache_bytes = 64 * 1024});
  const auto first = api.get_text("exp/asha/trials");
  for (int i = 0; i < 2000; ++i) {
    api.get_text("exp/asha/curves", {{"metric", fmt::format("m{}", i)}});
    api.get_text("exp/asha/summary", {{"junk", std::to_string(i)}});
    const auto stats = api.cache_stats();
    REQUIRE(stats.entries <= 16);
    REQUIRE(stats.bytes <= 64 * 1024);
  }
  // Unchanged experiments answer from the cache: the same text, not a copy.
  const auto again = api.get_text("exp/other/summary");
  CHECK(api.get_text("exp/other/summary") == again);
  CHECK(*api.get_text("exp/asha/trials") == *first);
  // A query parameter no answer reads makes no entry of its own.
  const size_t before = api.cache_stats().entries;
  api.get_text("exp/other/summary", {{"cache_buster", "1"}});
  CHECK(api.cache_stats().entries == before);
}

TEST_CASE("the trial table pages: every trial once across pages, in order, a page bounded") {
  DashboardDir runs;
  write_experiment(runs.path(), "asha", 25, 3);
  Api api({.root = runs.path(), .limits = {.max_page_trials = 10}});
  const Json all = api.get("exp/asha/trials");
  REQUIRE(all.size() == 25);
  Json seen = Json::array();
  for (int offset = 0; offset < 40; offset += 7) {
    const Json page = Json::parse(
        *api.get_text("exp/asha/trials", {{"offset", std::to_string(offset)}, {"limit", "7"}}));
    CHECK(page["total"] == 25);
    CHECK(page["offset"] == offset);
    for (const Json& t : page["trials"]) seen.push_back(t);
  }
  CHECK(seen == all);  // the same rows, in creation order, each once
  CHECK(Json::parse(*api.get_text("exp/asha/trials")) == all);  // the whole list, a page at a time
  // At most max_page_trials a page, when asked for more and by default.
  CHECK(api.get("exp/asha/trials", {{"offset", "0"}})["trials"].size() == 10);
  CHECK(api.get("exp/asha/trials", {{"offset", "20"}, {"limit", "1000"}})["trials"].size() == 5);
  CHECK(api.get("exp/asha/trials", {{"offset", "30"}})["trials"].empty());
  CHECK(api.get("exp/asha/trials", {{"offset", "-3"}, {"limit", "x"}})["trials"][0] == all[0]);
}

TEST_CASE("the report is one file: scripts and every answer inlined, no external reference") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  const auto out = runs.path() / "report.html";
  CHECK(write_report(dir, out) == 12);
  std::ifstream in(out);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.find("window.TUNERUN_REPORT") != std::string::npos);
  CHECK(html.find("\"exp/asha/trial/asha_00011\"") != std::string::npos);
  // The charts' metrics with the direction the page asks for: an
  // objective's own, "min" for another.
  CHECK(html.find("\"exp/asha/curves?metric=accuracy&mode=max\"") != std::string::npos);
  CHECK(html.find("\"exp/asha/curves?metric=loss&mode=min\"") != std::string::npos);
  CHECK(html.find("\"exp/asha/importance?metric=accuracy\"") != std::string::npos);
  CHECK(html.find("\"exp/asha/sample\"") != std::string::npos);
  CHECK(html.find("\"summaries/asha\"") != std::string::npos);
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("Chart.js v3") != std::string::npos);
  CHECK_THROWS_AS(write_report(runs.path() / "none", out), StorageError);
}

TEST_CASE("a report holds every trial's row but a bounded number of trial pages, and says so") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha");
  const auto out = runs.path() / "report.html";
  CHECK(write_report(dir, out, {.max_report_trials = 3}) == 12);
  std::ifstream in(out);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pages = 0;
  for (size_t at = html.find("\"exp/asha/trial/"); at != std::string::npos;
       at = html.find("\"exp/asha/trial/", at + 1)) {
    ++pages;
  }
  CHECK(pages == 3);
  CHECK(html.find("\"asha_00007\"") != std::string::npos);  // a row of a trial without a page
  CHECK(html.find("leaves out the own page (results) of 9 of the 12 trials") != std::string::npos);
}

TEST_CASE("a report's summaries stay within their budget, and it says what it left out") {
  DashboardDir runs;
  const auto dir = write_experiment(runs.path(), "asha", 40, 3);
  const auto out = runs.path() / "report.html";
  CHECK(write_report(dir, out, {.limits = {.max_chart_trials = 10}, .max_summary_bytes = 2000}) ==
        40);
  std::ifstream in(out);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t start = html.find("\"summaries/asha\":") + 17;
  Json summaries = Json::parse(html.substr(start, html.find("]]}", start) + 3 - start));
  REQUIRE(summaries["rows"].size() == 40);
  CHECK(summaries["metric_keys"][0] == "accuracy");  // the objective first
  const Json& first = summaries["rows"][0];
  CHECK(first[0] == "asha_00000");
  CHECK(first[7].size() == 2);  // accuracy and loss
  const Json& last = summaries["rows"][39];
  CHECK(last[5] == "");        // no reason past the budget
  CHECK(last[7].size() == 1);  // the objective alone
  CHECK(html.find("from trial") != std::string::npos);
  CHECK(html.find("from the charts all but about 10 trials") != std::string::npos);
}

}  // namespace
}  // namespace tune::dashboard
