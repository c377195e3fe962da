#include "dashboard/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/errors.h"
#include "dashboard/page.h"

namespace tune::dashboard {

namespace {

// Trials read at a time for the report's trial list: each page is
// serialised and dropped before the next is read, so memory stays that of
// one page however many trials there are.
constexpr int64_t kPageTrials = 5000;

std::string dumped(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

size_t write_report(const std::filesystem::path& experiment_dir,
                    const std::filesystem::path& output, const ReportOptions& options) {
  const ExperimentDb db = ExperimentDb::open(experiment_dir);  // a clear error before any work
  Api api({.root = experiment_dir, .limits = options.limits, .importance = options.importance});
  const auto names = api.experiment_names();
  const std::string name = names.at(0);
  const std::string prefix = "exp/" + name + "/";

  // Exactly the keys the page asks for (web/util.js: api()).
  std::vector<std::pair<std::string, std::string>> answers;
  auto add = [&](std::string key, const Json& answer) {
    answers.emplace_back(std::move(key), dumped(answer));
  };
  add("experiments", api.get("experiments"));
  const Json summary = api.get(prefix + "summary");
  add(prefix + "summary", summary);

  // Every trial's row (its summary), on the page's first request: a report
  // holds them all on one page. Built a page of rows at a time.
  std::string rows;
  std::vector<std::string> ids;
  int64_t total = 0;
  for (int64_t offset = 0;; offset += kPageTrials) {
    const Json page = db.trial_page(offset, kPageTrials);
    total = page["total"].get<int64_t>();
    for (const Json& row : page["trials"]) {
      if (!ids.empty()) rows += ',';
      rows += dumped(row);
      ids.push_back(row["trial_id"].get<std::string>());
    }
    if (page["trials"].size() < static_cast<size_t>(kPageTrials)) break;
  }
  answers.emplace_back(prefix + "trials?offset=0",
                       fmt::format(R"({{"total":{},"offset":0,"limit":{},"trials":[{}]}})", total,
                                   ids.size(), rows));
  rows.clear();
  rows.shrink_to_fit();

  add(prefix + "scheduler", api.get(prefix + "scheduler"));
  add(prefix + "front", api.get(prefix + "front"));
  // The charts' metric and direction as the page first shows them: the
  // first metric (an objective ranks by its mode; another by "min", the
  // page's default).
  for (const Json& metric : summary["metrics"]) {
    const std::string m = metric.get<std::string>();
    std::string mode = "min";
    for (const Json& o : summary["objectives"]) {
      if (o["metric"] == m) mode = o["mode"].get<std::string>();
    }
    add(prefix + "curves?metric=" + m + "&mode=" + mode,
        api.get(prefix + "curves", {{"metric", m}, {"mode", mode}}));
    add(prefix + "importance?metric=" + m, api.get(prefix + "importance", {{"metric", m}}));
  }

  // Each trial's page (its results) for the best trial of each objective
  // and an even sample of the rest, at most max_report_trials: the pages of
  // every trial of a large sweep would be gigabytes.
  std::vector<std::string> detailed;
  for (const Json& o : summary["objectives"]) {
    if (o["best"].is_object()) detailed.push_back(o["best"]["trial_id"].get<std::string>());
  }
  for (size_t i : thin(ids.size(), options.max_report_trials)) {
    if (detailed.size() >= options.max_report_trials) break;
    if (std::find(detailed.begin(), detailed.end(), ids[i]) == detailed.end()) {
      detailed.push_back(ids[i]);
    }
  }
  for (const std::string& id : detailed) {
    Json answer = api.get(prefix + "trial/" + id);
    answer["logs"] = Json::array();  // logs are not part of the report (the page says so)
    add(prefix + "trial/" + id, answer);
  }
  add("report", {{"num_trials", ids.size()},
                 {"detailed", detailed.size()},
                 {"note", detailed.size() < ids.size()
                              ? fmt::format("this report holds every trial's row, and the page "
                                            "of {} of the {} trials: the best of each objective "
                                            "and an even sample; `tunerun dashboard` shows the "
                                            "others",
                                            detailed.size(), ids.size())
                              : std::string()}});

  const std::string page = static_page(answers, fmt::format("tunerun report: {}", name));
  answers.clear();
  answers.shrink_to_fit();
  const std::filesystem::path temporary = output.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << page;
    if (!out.flush()) {
      const int code = errno;
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error(fmt::format("cannot write {}: {}", output.string(), std::strerror(code)));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, output, error);
  if (error) throw Error(fmt::format("cannot write {}: {}", output.string(), error.message()));
  return ids.size();
}

}  // namespace tune::dashboard
