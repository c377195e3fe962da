// benchmarks/scale: the dashboard's answers on the large experiment that
// store.cpp wrote, each computed afresh (a new Api: nothing cached) and
// serialised as the server sends it. A live sweep changes its fingerprint
// every poll, so the uncached time is what a user waits for.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "benchmarks/scale/figure.h"
#include "dashboard/api.h"

namespace scale {
namespace {

constexpr double kGoalMs = 500;

// This process's resident memory (VmRSS) in MB; 0 when unreadable.
double resident_mb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmRSS: %lf kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb / 1024;
}

}  // namespace

std::vector<Figure> dashboard_figures(const Options& options, const WrittenExperiment& written) {
  const std::string prefix = "exp/" + written.name + "/";
  const std::string first = fmt::format("{}_{:05d}", written.name, 0);
  const std::string last = fmt::format("{}_{:05d}", written.name, written.trials - 1);
  const std::vector<std::pair<std::string, tune::dashboard::Query>> paths = {
      {"experiments", {}},
      {"version", {}},
      {prefix + "version", {}},
      {prefix + "summary", {}},
      {prefix + "sample", {}},
      {prefix + "trials", {{"offset", "0"}, {"limit", "100"}}},
      {prefix + "trials", {{"offset", "0"}, {"limit", "100"}, {"sort", "metric.loss"}}},
      {prefix + "trials", {{"offset", "500"}, {"limit", "100"}, {"filter", "rung 1"}}},
      {prefix + "trials",
       {{"offset", std::to_string(std::max<int64_t>(0, written.trials - 100))}, {"limit", "100"}}},
      {prefix + "curves", {{"metric", "loss"}}},
      {prefix + "scheduler", {}},
      {prefix + "front", {}},
      {prefix + "importance", {}},
      {prefix + "trial/" + first, {}},
      {prefix + "trial/" + last, {}},
      {prefix + "trials", {}},
  };
  const int repeats = options.quick ? 1 : 3;
  std::vector<Figure> out;
  for (const auto& [path, query] : paths) {
    std::vector<double> ms;
    size_t bytes = 0;
    for (int i = 0; i < repeats; ++i) {
      tune::dashboard::Api api({.root = written.runs});
      const auto start = std::chrono::steady_clock::now();
      bytes = api.get_text(path, query)->size();
      ms.push_back(seconds_since(start) * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    std::string shown = path;
    for (const auto& [key, value] : query) {
      shown += fmt::format("{}{}={}", shown.find('?') == std::string::npos ? "?" : "&", key, value);
    }
    const double median = ms[ms.size() / 2];
    // The whole trial list is for scripts; the page asks for it a page at a time.
    const bool whole_list = path == prefix + "trials" && query.empty();
    out.push_back({fmt::format("dashboard: {} ({} kB)", shown, thousands(bytes / 1024.0)),
                   fmt::format("{:.0f} ms", median),
                   whole_list ? "" : fmt::format("< {:.0f} ms", kGoalMs),
                   whole_list ? std::nullopt : std::optional<bool>(median < kGoalMs)});
  }
  // The answer cache of one server (one Api) that answered all of them,
  // the whole trial list included, beside its bound; and this process's
  // resident memory then.
  tune::dashboard::Api api({.root = written.runs});
  for (const auto& [path, query] : paths) api.get_text(path, query);
  const auto stats = api.cache_stats();
  const double bound = static_cast<double>(tune::dashboard::ApiOptions{}.cache_bytes);
  out.push_back({fmt::format("dashboard: the answer cache after every answer above ({} answers)",
                             stats.entries),
                 fmt::format("{:.1f} MB", stats.bytes / 1e6),
                 fmt::format("<= {:.1f} MB", bound / 1e6), stats.bytes <= bound});
  out.push_back({"dashboard: this process's resident memory then (VmRSS)",
                 fmt::format("{:.0f} MB", resident_mb()), "", std::nullopt});
  return out;
}

}  // namespace scale
