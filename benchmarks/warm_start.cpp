// warm_start: what an earlier experiment's trials are worth to the next one.
//
// A first run of N trials (TPE, GP-BO) on a function; then a second run on
// the function shifted slightly (the same problem next week: its optimum
// moved by a few percent of each range, its best value the same), warm
// started from the first run's trials (Searcher::warm_start, as a sweep's
// warm_start = ["runs/first"] gives them), beside a cold second run. Per
// seed: the trials the second run needs until its best is at least as good
// as the first run's final best. The goal: a warm run gets there within N/3
// trials. Printed: the median over seeds (N + 1 when it never gets there),
// and how many seeds got there within N/3, warm and cold.
//
// Functions (tests/search/objectives.h): Branin (2-d, shifted by 0.3 in
// each coordinate, 2% of the ranges) and the hyperparameter-like space with
// integers (its best rate 10^0.1 larger, its best dropout 0.02 larger).
//
// With --per-seed, each seed's trials too (warm, then cold).
//
// Usage: warm_start [--seeds N] [--first-seed S] [--trials N] [--only tpe|gp] [--per-seed]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "search/factory.h"
#include "tests/search/objectives.h"

namespace {

using tune::Json;
namespace testing = tune::search::testing;

struct Function {
  std::string name;
  tune::ParamSpace space;
  std::function<double(const Json&)> f, shifted;
};

std::vector<Function> functions() {
  auto branin_shifted = [](const Json& c) {
    Json moved = c;
    moved["x1"] = c["x1"].get<double>() - 0.3;
    moved["x2"] = c["x2"].get<double>() - 0.3;
    return testing::branin(moved);
  };
  auto hpo_shifted = [](const Json& c) {
    Json moved = c;
    moved["lr"] = c["lr"].get<double>() / std::pow(10, 0.1);
    moved["drop"] = c["drop"].get<double>() - 0.02;
    return testing::hpo_loss(moved);
  };
  return {{"branin", testing::branin_space(), testing::branin, branin_shifted},
          {"hpo_mixed", testing::hpo_space(true), testing::hpo_loss, hpo_shifted}};
}

// Runs `n` trials of `searcher` on `f`; returns every (config, value).
std::vector<std::pair<Json, double>> run(tune::search::Searcher& searcher,
                                         const std::function<double(const Json&)>& f, int n) {
  std::vector<std::pair<Json, double>> out;
  for (int i = 0; i < n; ++i) {
    const std::string id = std::to_string(i);
    auto s = searcher.suggest(id);
    const double value = f(s.config);
    const Json result = {{"loss", value}};
    searcher.on_trial_complete(id, &result, false);
    out.emplace_back(std::move(s.config), value);
  }
  return out;
}

// Trials until the best value is <= target; n + 1 when never.
int trials_to_reach(const std::vector<std::pair<Json, double>>& trials, double target) {
  for (size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].second <= target) return static_cast<int>(i) + 1;
  }
  return static_cast<int>(trials.size()) + 1;
}

double median(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 10, first_seed = 0, trials = 60;
  std::string only;  // "tpe" or "gp": that searcher alone
  bool per_seed = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--first-seed") && i + 1 < argc) first_seed = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) trials = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    if (!std::strcmp(argv[i], "--per-seed")) per_seed = true;
  }
  fmt::print(
      "warm_start: {} trials per run, seeds {}..{}; trials until the second run's best "
      "reaches the first run's final best (median; {} = never)\n\n",
      trials, first_seed, first_seed + seeds - 1, trials + 1);
  fmt::print("{:<10} {:<5} {:>11} {:>11} {:>14} {:>14}\n", "function", "algo", "warm median",
             "cold median", "warm <= N/3", "cold <= N/3");
  for (const Function& fn : functions()) {
    for (const std::string algorithm : {"tpe", "gp"}) {
      if (!only.empty() && algorithm != only) continue;
      std::vector<int> warm, cold;
      for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
        const auto make = [&](uint64_t s) {
          auto searcher = tune::search::make_searcher(algorithm, Json::object(), {trials, s});
          searcher->set_search_properties("loss", tune::Mode::kMin, fn.space);
          return searcher;
        };
        auto first = make(static_cast<uint64_t>(seed));
        const auto earlier = run(*first, fn.f, trials);
        double target = INFINITY;
        std::vector<tune::search::PriorTrial> prior;
        for (const auto& [config, value] : earlier) {
          target = std::min(target, value);
          prior.push_back({config, Json{{"loss", value}}});
        }
        auto second = make(static_cast<uint64_t>(seed) + 1000);
        second->warm_start(prior);
        warm.push_back(trials_to_reach(run(*second, fn.shifted, trials), target));
        auto fresh = make(static_cast<uint64_t>(seed) + 1000);
        cold.push_back(trials_to_reach(run(*fresh, fn.shifted, trials), target));
      }
      const auto within = [&](const std::vector<int>& v) {
        return std::count_if(v.begin(), v.end(), [&](int t) { return 3 * t <= trials; });
      };
      fmt::print("{:<10} {:<5} {:>11} {:>11} {:>11}/{:<2} {:>11}/{:<2}\n", fn.name, algorithm,
                 median(warm), median(cold), within(warm), seeds, within(cold), seeds);
      if (per_seed) {
        fmt::print("  warm {}\n  cold {}\n", fmt::join(warm, " "), fmt::join(cold, " "));
      }
    }
  }
}
