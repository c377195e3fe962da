// multi_objective: how good and how cheap our multi-objective searchers are,
// beside Optuna 3.1's measured in the same run
// (benchmarks/anchors/optuna_multi_objective.py).
//
// On ZDT1, ZDT2, ZDT3 (2 objectives, 10 parameters), DTLZ2 (3 objectives, 8
// parameters) and two hyperparameter-like mixed spaces with a latency-like
// second objective (tests/search/mo_problems.h), each searcher runs
// `--trials` trials per seed, evaluated in-process through the Searcher
// interface, one at a time. The table gives the median hypervolume of the
// trials so far after 50, 100 and 200 trials, below the problem's fixed
// reference point (the same code, core::hypervolume, scores Optuna's
// trials), and the milliseconds a suggestion took (ours: suggest() and
// on_trial_complete() over the last 20 trials; Optuna's: its whole run
// over the trials, as it reports no finer time), and for ours also the
// CPU milliseconds of this thread in those calls (what a suggestion costs
// on an idle machine; a shared machine's wall clock is not) and the part
// of it the searcher reports as fitting its model ("fit ms", what `tunerun
// status --verbose` shows per trial). "vs" is our best
// searcher's median over Optuna's best sampler's at each budget: 1 or more
// meets the goal.
//
// With --constrained, the problems' constrained versions instead
// (mo_constraint: about half the front cut off), scored by the hypervolume
// of feasible trials, Optuna's samplers with constraints_func.
//
// With --hard, the second family (mo_hard_problems: ZDT4, ZDT6, DTLZ1,
// DTLZ7, ZDT6 and DTLZ7 with the optimum moved inside the box, and TNK and
// SRN with their own constraints). Constrained problems also get the median
// number of feasible trials at each budget. "motpe vs theirs" is our MOTPE's
// median over Optuna's MOTPE's (optuna_tpe, its univariate TPESampler),
// "motpe vs best" our MOTPE's over Optuna's best sampler's; Optuna's random
// search (optuna_random) counts toward neither "best".
//
// Usage: multi_objective [--seeds N] [--first-seed S] [--trials N] [--constrained] [--hard]
//                        [--problems a,b] [--only SEARCHER,...] [--no-optuna]
//                        [--optuna-samplers nsga2,tpe,tpe_mv] [--quick]
//                        [--optuna-log FILE] [--optuna-from FILE] [--optuna-jobs J]
//                        [--motpe-options JSON] [--nsga2-options JSON] [--gp-options JSON]
// --quick: 3 seeds and 100 trials (a CI-sized check). Optuna's runs take
// far longer than ours (minutes per problem): --optuna-log keeps its output
// lines, and --optuna-from reads such a file instead of running it again,
// to compare settings of ours against one measurement of Optuna's;
// --optuna-jobs runs that many of its studies at once. --motpe-options,
// --nsga2-options and --gp-options override the rows "motpe", "nsga2" and
// "gp" (our defaults), to compare settings.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "benchmarks/anchor.h"
#include "core/pareto.h"
#include "search/factory.h"
#include "tests/search/mo_problems.h"

namespace {

using tune::Json;
using tune::search::Suggestion;
using tune::search::testing::MoProblem;

struct Searcher {
  std::string label, algorithm;
  Json options;
};

std::vector<Searcher> searchers() {
  // motpe_as_optuna: ours with the settings of the MOTPE Optuna runs by
  // default, TPESampler() (univariate, search/internal/motpe.h), so its row
  // beside optuna_tpe compares the two implementations of one model.
  // NSGA-II's default crossover is Optuna's; nsga2_sbx is the other.
  const Json optuna_motpe = {
      {"multivariate", false}, {"bandwidth", "neighbour"}, {"gamma", 0.1}, {"feasibility", false}};
  return {{"motpe", "motpe", Json::object()}, {"motpe_as_optuna", "motpe", optuna_motpe},
          {"nsga2", "nsga2", Json::object()}, {"nsga2_sbx", "nsga2", {{"crossover", "sbx"}}},
          {"gp", "gp", Json::object()},       {"random", "random", Json::object()}};
}

// One run: the losses and constraint violation of every trial, in order.
struct Run {
  std::vector<tune::core::Point> losses;
  std::vector<double> violations;
  double seconds = 0;        // in the searcher, all trials
  double last20_ms = 0;      // per trial, over the last 20
  double last20_cpu_ms = 0;  // the thread's CPU time in the searcher, likewise
  double last20_fit_ms = 0;  // the model fits they report (Suggestion::model_fit_s), likewise
};

// The calling thread's CPU time in seconds.
double thread_cpu_s() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

Run run(const Searcher& s, const MoProblem& p, bool constrained, int trials, uint64_t seed) {
  Json options = s.options;
  auto searcher =
      tune::search::make_searcher(s.algorithm, options, {.num_samples = trials, .seed = seed});
  std::vector<tune::Objective> objectives;
  for (size_t k = 0; k < p.num_objectives; ++k) objectives.push_back({"f" + std::to_string(k)});
  searcher->set_objectives(objectives, p.space);
  Run out;
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < trials; ++i) {
    const std::string id = std::to_string(i);
    const auto t0 = Clock::now();
    const double cpu0 = thread_cpu_s();
    Suggestion suggestion = searcher->suggest(id);
    const auto t1 = Clock::now();
    const double cpu1 = thread_cpu_s();
    const std::vector<double> losses = p.evaluate(suggestion.config);
    Json result = Json::object();
    for (size_t k = 0; k < losses.size(); ++k) result["f" + std::to_string(k)] = losses[k];
    double violation = 0;
    if (p.constraints) {
      const std::vector<double> c = p.constraints(suggestion.config);
      result[tune::core::kConstraintsKey] = c;
      for (double v : c) violation += std::max(v, 0.0);
    } else if (constrained) {
      const double c = tune::search::testing::mo_constraint(p.name, losses);
      result[tune::core::kConstraintsKey] = Json::array({c});
      violation = std::max(c, 0.0);
    }
    const auto t2 = Clock::now();
    const double cpu2 = thread_cpu_s();
    searcher->on_trial_complete(id, &result, false);
    const double s_in = std::chrono::duration<double>(t1 - t0 + (Clock::now() - t2)).count();
    const double cpu_in = cpu1 - cpu0 + (thread_cpu_s() - cpu2);
    out.seconds += s_in;
    if (i >= trials - 20) {
      out.last20_ms += 1e3 * s_in / 20;
      out.last20_cpu_ms += 1e3 * cpu_in / 20;
      out.last20_fit_ms += 1e3 * suggestion.model_fit_s.value_or(0) / 20;
    }
    out.losses.push_back(losses);
    out.violations.push_back(violation);
  }
  return out;
}

// The hypervolume of the feasible ones of the first n trials.
double hypervolume_at(const std::vector<tune::core::Point>& losses,
                      const std::vector<double>& violations, size_t n,
                      const std::vector<double>& reference) {
  std::vector<tune::core::Point> feasible;
  for (size_t i = 0; i < std::min(n, losses.size()); ++i) {
    if (violations.empty() || violations[i] <= 0) feasible.push_back(losses[i]);
  }
  return tune::core::hypervolume(std::move(feasible), reference);
}

// How many of the first n trials are feasible.
double feasible_at(const std::vector<double>& violations, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < std::min(n, violations.size()); ++i) count += violations[i] <= 0;
  return static_cast<double>(count);
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool listed(const std::string& list, const std::string& name) {
  return list.empty() || (',' + list + ',').find(',' + name + ',') != std::string::npos;
}

// Optuna's runs, keyed by "problem/sampler", in seed order: from the anchor
// run with `args` (its lines copied to `log` unless empty), or from a file
// `from` such a log.
std::map<std::string, std::vector<Json>> run_optuna(const std::string& args, Json& env,
                                                    const std::string& log,
                                                    const std::string& from) {
  std::map<std::string, std::vector<Json>> out;
  std::string command;
  if (!from.empty()) {
    command = "cat '" + from + "'";
  } else if (auto missing = bench::missing_anchor("optuna", "python3-optuna"); !missing.empty()) {
    fmt::print("Optuna {}\n", missing);
    return out;
  } else {
    command = bench::anchor_command("optuna_multi_objective.py", args + " 2>&1");
    if (!log.empty()) command += " | tee '" + log + "'";
  }
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::string line, unparsed;
  std::array<char, 65536> chunk;
  while (fgets(chunk.data(), chunk.size(), pipe)) {
    line += chunk.data();
    if (line.empty() || line.back() != '\n') continue;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      unparsed += line;
    } else if (j.value("bench", "") == "env") {
      env = j;
    } else if (j.value("bench", "") == "mo") {
      out[j["problem"].get<std::string>() + "/" + j["sampler"].get<std::string>()].push_back(j);
    }
    line.clear();
  }
  if (pclose(pipe) != 0 || out.empty()) {
    fmt::print("Optuna anchor unavailable ({}): {}\n", command, unparsed.substr(0, 300));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 20, first_seed = 0, trials = 200, optuna_jobs = 1;
  bool constrained = false, optuna = true, hard = false;
  std::string problems, only, optuna_samplers = "nsga2,tpe,tpe_mv", optuna_log, optuna_from;
  Json motpe_options = Json::object(), nsga2_options = Json::object(), gp_options = Json::object();
  for (int i = 1; i < argc; ++i) {
    const auto arg = [&](const char* name) { return !std::strcmp(argv[i], name) && i + 1 < argc; };
    if (arg("--seeds")) seeds = std::atoi(argv[++i]);
    if (arg("--first-seed")) first_seed = std::atoi(argv[++i]);
    if (arg("--trials")) trials = std::atoi(argv[++i]);
    if (arg("--problems")) problems = argv[++i];
    if (arg("--only")) only = argv[++i];
    if (arg("--optuna-samplers")) optuna_samplers = argv[++i];
    if (arg("--optuna-log")) optuna_log = argv[++i];
    if (arg("--optuna-from")) optuna_from = argv[++i];
    if (arg("--optuna-jobs")) optuna_jobs = std::atoi(argv[++i]);
    if (arg("--motpe-options")) motpe_options = Json::parse(argv[++i]);
    if (arg("--nsga2-options")) nsga2_options = Json::parse(argv[++i]);
    if (arg("--gp-options")) gp_options = Json::parse(argv[++i]);
    if (!std::strcmp(argv[i], "--constrained")) constrained = true;
    if (!std::strcmp(argv[i], "--hard")) hard = true;
    if (!std::strcmp(argv[i], "--no-optuna")) optuna = false;
    if (!std::strcmp(argv[i], "--quick")) {
      seeds = 3;
      trials = 100;
    }
  }
  std::vector<size_t> budgets;
  for (size_t b : {50, 100, 200}) {
    if (b <= static_cast<size_t>(trials)) budgets.push_back(b);
  }
  const std::string suffix = constrained ? "_c" : "";

  std::vector<MoProblem> chosen;
  for (MoProblem& p :
       hard ? tune::search::testing::mo_hard_problems() : tune::search::testing::mo_problems()) {
    if (listed(problems, p.name)) chosen.push_back(std::move(p));
  }

  Json env = Json::object();
  std::map<std::string, std::vector<Json>> theirs;
  if (optuna) {
    std::string names;
    for (const MoProblem& p : chosen) {
      names += (names.empty() ? "" : ",") + p.name + (p.constraints ? "" : suffix);
    }
    theirs = run_optuna(fmt::format("--trials {} --seeds {} --first-seed {} --problems {} "
                                    "--samplers {} --jobs {}",
                                    trials, seeds, first_seed, names, optuna_samplers, optuna_jobs),
                        env, optuna_log, optuna_from);
  }

  fmt::print(
      "multi_objective: median hypervolume over seeds {}..{}, {} trials{}; Optuna {} "
      "(python {}) in the same run\n",
      first_seed, first_seed + seeds - 1, trials,
      constrained ? ", constrained (feasible trials only)" : "", env.value("optuna", "-"),
      env.value("python", "-"));
  std::vector<std::string> verdicts;
  for (const MoProblem& p : chosen) {
    const std::string name = p.name + (p.constraints ? "" : suffix);
    const bool feasibility = constrained || p.constraints;
    fmt::print("\n{}{} (reference {})\n", name, p.constraints ? ", constrained" : "",
               Json(p.reference).dump());
    fmt::print("  {:<16}", "searcher");
    for (size_t b : budgets) fmt::print(" {:>9}", fmt::format("hv@{}", b));
    if (feasibility) {
      for (size_t b : budgets) fmt::print(" {:>8}", fmt::format("feas@{}", b));
    }
    fmt::print(" {:>9} {:>9} {:>9}\n", "ms/trial", "cpu ms", "fit ms");
    std::map<size_t, double> best_ours, best_theirs, motpe_ours, motpe_theirs;
    // Per budget, medians over seeds: hv[j] hypervolumes, feasible[j]
    // feasible trials. `cpu_ms`, `fit_ms` < 0: not measured (Optuna's).
    auto row = [&](const std::string& label, const std::vector<std::vector<double>>& hv,
                   const std::vector<std::vector<double>>& feasible, double ms, double cpu_ms,
                   double fit_ms, std::map<size_t, double>& best, std::map<size_t, double>& motpe) {
      fmt::print("  {:<16}", label);
      const bool random = label == "random" || label == "optuna_random";
      for (size_t j = 0; j < budgets.size(); ++j) {
        const double m = median(hv[j]);
        fmt::print(" {:>9.4f}", m);
        if (!random) best[budgets[j]] = std::max(best[budgets[j]], m);
        if (label == "motpe" || label == "optuna_tpe") motpe[budgets[j]] = m;
      }
      if (feasibility) {
        for (size_t j = 0; j < budgets.size(); ++j) fmt::print(" {:>8.1f}", median(feasible[j]));
      }
      fmt::print(" {:>9.2f} {:>9} {:>9}\n", ms, cpu_ms < 0 ? "-" : fmt::format("{:.2f}", cpu_ms),
                 fit_ms < 0 ? "-" : fmt::format("{:.2f}", fit_ms));
    };
    auto score = [&](const std::vector<tune::core::Point>& losses,
                     const std::vector<double>& violations, std::vector<std::vector<double>>& hv,
                     std::vector<std::vector<double>>& feasible) {
      for (size_t j = 0; j < budgets.size(); ++j) {
        hv[j].push_back(hypervolume_at(losses, violations, budgets[j], p.reference));
        feasible[j].push_back(feasible_at(violations, budgets[j]));
      }
    };
    for (Searcher s : searchers()) {
      if (!listed(only, s.label)) continue;
      if (s.label == "motpe") s.options.update(motpe_options);
      if (s.label == "nsga2") s.options.update(nsga2_options);
      if (s.label == "gp") s.options.update(gp_options);
      std::vector<std::vector<double>> hv(budgets.size()), feasible(budgets.size());
      double ms = 0, cpu_ms = 0, fit_ms = 0;
      for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
        const Run r = run(s, p, constrained, trials, static_cast<uint64_t>(seed));
        score(r.losses, r.violations, hv, feasible);
        ms += r.last20_ms / seeds;
        cpu_ms += r.last20_cpu_ms / seeds;
        fit_ms += r.last20_fit_ms / seeds;
      }
      row(s.label, hv, feasible, ms, cpu_ms, fit_ms, best_ours, motpe_ours);
    }
    for (const auto& [key, runs] : theirs) {
      if (key.substr(0, key.find('/')) != name) continue;
      std::vector<std::vector<double>> hv(budgets.size()), feasible(budgets.size());
      double ms = 0;
      for (const Json& r : runs) {
        score(r["losses"].get<std::vector<tune::core::Point>>(),
              r["violations"].get<std::vector<double>>(), hv, feasible);
        ms += 1e3 * r["seconds"].get<double>() / trials / static_cast<double>(runs.size());
      }
      row("optuna_" + key.substr(key.find('/') + 1), hv, feasible, ms, -1, -1, best_theirs,
          motpe_theirs);
    }
    if (best_theirs.empty() || best_ours.empty()) continue;
    auto ratios = [&](const char* label, std::map<size_t, double>& ours,
                      std::map<size_t, double>& their) {
      std::string line = fmt::format("  {:<16}", label);
      bool met = true;
      for (size_t b : budgets) {
        const double r = ours[b] / their[b];
        line += fmt::format(" {:>9.3f}", r);
        if (b >= 100 && !(r >= 1)) met = false;
      }
      fmt::print("{}\n", line);
      return met;
    };
    const bool met = ratios("vs optuna best", best_ours, best_theirs);
    std::string motpe_verdict;
    if (!motpe_ours.empty() && !motpe_theirs.empty()) {
      motpe_verdict =
          ratios("motpe vs theirs", motpe_ours, motpe_theirs) ? ", MOTPE met" : ", MOTPE NOT met";
    }
    if (!motpe_ours.empty()) {
      motpe_verdict += ratios("motpe vs best", motpe_ours, best_theirs)
                           ? ", MOTPE vs their best met"
                           : ", MOTPE vs their best NOT met";
    }
    verdicts.push_back(fmt::format("{}: {}{}", name, met ? "met" : "NOT met", motpe_verdict));
  }
  if (!verdicts.empty()) {
    fmt::print(
        "\nGoal (our best median >= Optuna's best at 100 and 200 trials; our MOTPE >= "
        "Optuna's univariate MOTPE, optuna_tpe, and >= Optuna's best):\n");
    for (const auto& v : verdicts) fmt::print("  {}\n", v);
  }
}
