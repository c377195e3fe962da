#include "dashboard/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/errors.h"
#include "dashboard/page.h"
#include "dashboard/report_summaries.h"

namespace tune::dashboard {

namespace {

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

  // The trials the charts draw, as the live page gets them; and every
  // trial's summary for the table (report_summaries: compact rows).
  add(prefix + "sample", api.get(prefix + "sample"));
  std::vector<std::string> objective_names;
  for (const Json& o : summary["objectives"]) objective_names.push_back(o["metric"]);
  Summaries summaries = report_summaries(db, objective_names, options.max_summary_bytes);
  const std::vector<std::string>& ids = summaries.ids;
  answers.emplace_back("summaries/" + name, std::move(summaries.text));

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
  // Their results thinned further than the live page's, and no more pages
  // once max_detail_bytes is spent.
  QueryLimits detail_limits = options.limits;
  detail_limits.max_trial_results = std::min<size_t>(detail_limits.max_trial_results, 500);
  size_t detail_bytes = 0, kept = 0;
  for (const std::string& id : detailed) {
    if (detail_bytes >= options.max_detail_bytes) break;
    Json answer = db.trial(id, detail_limits);
    answer["logs"] = Json::array();  // logs are not part of the report (the page says so)
    add(prefix + "trial/" + id, answer);
    detail_bytes += answers.back().second.size();
    ++kept;
  }
  std::vector<std::string> left_out;
  if (kept < ids.size()) {
    left_out.push_back(
        fmt::format("the own page (results) of {} of the {} trials: those of the "
                    "best of each objective and an even sample are here",
                    ids.size() - kept, ids.size()));
  }
  if (summaries.trimmed_from) {
    left_out.push_back(
        fmt::format("from trial {} on, each trial's reason and its metrics but the objectives (the "
                    "summaries reached {} MB)",
                    *summaries.trimmed_from, options.max_summary_bytes >> 20));
  }
  const int64_t drawn = static_cast<int64_t>(options.limits.max_chart_trials);
  if (static_cast<int64_t>(ids.size()) > drawn) {
    left_out.push_back(
        fmt::format("from the charts all but about {} trials (an even sample and "
                    "each objective's best)",
                    drawn));
  }
  std::string note;
  for (const std::string& part : left_out) note += (note.empty() ? "" : "; ") + part;
  add("report",
      {{"num_trials", ids.size()},
       {"detailed", kept},
       {"note", note.empty() ? note
                             : "this report holds every trial's summary (the table) but leaves "
                               "out " +
                                   note + "; `tunerun dashboard` shows everything"}});

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
