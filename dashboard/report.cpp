#include "dashboard/report.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/errors.h"
#include "dashboard/page.h"

namespace tune::dashboard {

size_t write_report(const std::filesystem::path& experiment_dir,
                    const std::filesystem::path& output, const ReportOptions& options) {
  ExperimentDb::open(experiment_dir);  // a clear error before any work when it is not one
  Api api({.root = experiment_dir, .limits = options.limits, .importance = options.importance});
  const auto names = api.experiment_names();
  const std::string name = names.at(0);
  const std::string prefix = "exp/" + name + "/";

  // Exactly the keys the page asks for (web/util.js: api()).
  Json answers = Json::object();
  answers["experiments"] = api.get("experiments");
  const Json summary = api.get(prefix + "summary");
  answers[prefix + "summary"] = summary;
  const Json trials = api.get(prefix + "trials");
  // The page's first request, whole: a report holds every trial on one page.
  answers[prefix + "trials?offset=0"] = {
      {"total", trials.size()}, {"offset", 0}, {"limit", trials.size()}, {"trials", trials}};
  answers[prefix + "scheduler"] = api.get(prefix + "scheduler");
  answers[prefix + "front"] = api.get(prefix + "front");
  answers[prefix + "importance"] = api.get(prefix + "importance");
  for (const Json& metric : summary["metrics"]) {
    const std::string m = metric.get<std::string>();
    answers[prefix + "curves?metric=" + m] = api.get(prefix + "curves", {{"metric", m}});
  }
  for (const Json& trial : trials) {
    const std::string id = trial["trial_id"].get<std::string>();
    Json answer = api.get(prefix + "trial/" + id);
    answer["logs"] = Json::array();  // logs are not part of the report (the page says so)
    answers[prefix + "trial/" + id] = std::move(answer);
  }

  const std::string page = static_page(answers, fmt::format("tunerun report: {}", name));
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
  return trials.size();
}

}  // namespace tune::dashboard
