// search_quality: how good and how cheap our searchers are, beside Optuna
// measured in the same run (benchmarks/anchors/optuna_baseline.py).
//
//   1. Median best value after 50 and 100 trials over 10 seeds, for random,
//      TPE and GP-BO, on Branin (2-d) and Hartmann6 (6-d), evaluated
//      in-process through the Searcher interface. Regret ratio =
//      (ours - optimum) / (Optuna's - optimum): below 1 is better than
//      Optuna. Our TPE with its defaults (search/internal/tpe.h) is set against
//      Optuna's TPESampler(); tpe_as_optuna and tpe_as_optuna_mv are ours
//      with Optuna's settings, univariate and multivariate, against the same
//      sampler of Optuna's. GP-BO is set against Optuna's TPE (Optuna 3.1 has
//      no GP sampler).
//   2. Milliseconds per suggestion (suggest() + on_trial_complete()) with
//      100, 200 and 1000 completed trials (Hartmann6), against Optuna's TPE in
//      memory (its `overhead` run: 500 trials, and its `quality` run:
//      100-trial studies). The history is random configs (the start-up
//      phase), and for TPE also its own suggestions ("own history"), which
//      cluster and so leave more kernels near each candidate.
//
//   With --more-functions, also Hartmann3, the six-hump camel, Rosenbrock-4
//   (as log(1 + f)), Styblinski-Tang-4, Ackley-5 and two hyperparameter-like
//   spaces with choices and integers (tests/search/objectives.h); with
//   --first-seed, seeds other than the baseline's 0..N-1 (to check that a
//   change holds beyond the seeds it was tuned on). On those, Optuna's TPE
//   runs the same functions and seeds (benchmarks/optuna_functions.py), and
//   a last table says where GP-BO's median is at least as good as it.
//   --shape-functions adds Rosenbrock-4 raw (a curved valley whose values
//   span 1e-3..1e6) and Rastrigin-4 (rugged: a local minimum at every
//   integer point), the shapes that test GP-BO's output transform and
//   acquisition. --high-dims adds Ackley-10 and Rosenbrock-10 (as
//   log(1 + f)), where GP-BO's trust region joins (from 8 dimensions).
//   --rugged adds a family with many regular local minima over a global
//   trend: Rastrigin in 2, 3 (its bowl off centre), 4 and 6 dims, Griewank
//   in 4 and 6, Schwefel in 2 and 4 (benchmarks/search_functions.h), where
//   GP-BO's acquisition is measured against our TPE at small budgets.
//   Whenever both ran, a last table sets GP-BO against our TPE seed by seed.
//
// Usage: search_quality [--seeds N] [--first-seed S] [--more-functions] [--no-optuna]
//                       [--only SEARCHER,...] [--function NAME] [--no-cost]
//                       [--gp-options JSON] [--tpe-options JSON] [--shape-functions]
//                       [--high-dims] [--rugged]
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "benchmarks/anchor.h"
#include "benchmarks/search_functions.h"
#include "search/factory.h"
#include "tests/search/objectives.h"

namespace {

using tune::Json;
using tune::search::Searcher;
using tune::search::Suggestion;
using Clock = std::chrono::steady_clock;
using bench::Function;
namespace testing = tune::search::testing;

struct Algorithm {
  std::string label;  // ours
  std::string name;   // make_searcher's
  Json options;
  std::string optuna;  // Optuna's sampler to compare with
};

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> list = {
      {"random", "random", Json::object(), "random"},
      {"tpe", "tpe", Json::object(), "tpe"},
      // Optuna's TPESampler() and TPESampler(multivariate=True), rebuilt.
      {"tpe_as_optuna",
       "tpe",
       {{"multivariate", false}, {"weighting", "optuna"}, {"gamma", 0.1}},
       "tpe"},
      {"tpe_as_optuna_mv",
       "tpe",
       {{"bandwidth", "scott"}, {"weighting", "optuna"}, {"gamma", 0.1}},
       "tpe_multivariate"},
      {"gp", "gp", Json::object(), "tpe"},
  };
  return list;
}

// Runs `n` trials one after another; returns the values in order and adds
// the time spent in the searcher (suggest(), on_trial_result() and
// on_trial_complete(), not the objective) to `searcher_s`.
std::vector<double> run(Searcher& s, const Function& fn, int n, double& searcher_s) {
  std::vector<double> values;
  for (int i = 0; i < n; ++i) {
    const std::string id = fmt::format("t{:05d}", i);
    const auto t0 = Clock::now();
    Suggestion sug = s.suggest(id);
    const auto t1 = Clock::now();
    if (sug.status != Suggestion::Status::kConfig) break;
    const double v = fn.f(sug.config);
    const Json result{{"value", v}, {"training_iteration", 1}};
    const auto t2 = Clock::now();
    s.on_trial_result(id, result);
    s.on_trial_complete(id, &result, false);
    searcher_s += std::chrono::duration<double>(t1 - t0 + (Clock::now() - t2)).count();
    values.push_back(v);
  }
  return values;
}

// The calling thread's CPU time in seconds (the objective's is included, a
// few microseconds; the wall clock of a shared machine is not).
double thread_cpu_s() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::unique_ptr<Searcher> make(const Algorithm& a, const Function& fn, int64_t budget,
                               uint64_t seed, Json extra = Json::object()) {
  Json options = a.options;
  options.update(extra);
  auto s = tune::search::make_searcher(a.name, options, {.num_samples = budget, .seed = seed});
  s->set_search_properties("value", tune::Mode::kMin, fn.space);
  return s;
}

// Optuna's JSON lines, keyed by "bench/function/sampler" or "bench/storage/sampler",
// from anchor `script` (benchmarks/anchors/) run with `args`.
std::map<std::string, Json> run_optuna(const std::string& script, const std::string& args) {
  std::map<std::string, Json> out;
  if (auto missing = bench::missing_anchor("optuna", "python3-optuna"); !missing.empty()) {
    fmt::print("Optuna {}\n", missing);
    return out;
  }
  const std::string command = bench::anchor_command(script, args + " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> line;
  std::string unparsed;
  while (fgets(line.data(), line.size(), pipe)) {
    Json j = Json::parse(line.data(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      unparsed += line.data();
      continue;
    }
    const std::string bench = j.value("bench", "");
    if (bench == "env") out["env"] = j;
    if (bench == "quality")
      out["quality/" + j.value("function", "") + "/" + j.value("sampler", "")] = j;
    if (bench == "overhead") {
      out["overhead/" + j.value("storage", "") + "/" + j.value("sampler", "")] = j;
    }
  }
  if (pclose(pipe) != 0 || out.empty()) {
    fmt::print("Optuna anchor unavailable ({}): {}\n", command, unparsed.substr(0, 300));
  }
  return out;
}

std::string ratio(double ours, double theirs, double optimum) {
  const double r = (ours - optimum) / (theirs - optimum);
  return std::isfinite(r) ? fmt::format("{:.2f}", r) : "-";
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 10;
  int first_seed = 0;
  bool optuna = true;
  bool more = false;
  bool shapes = false;
  bool high_dims = false;
  bool rugged = false;
  std::string only;      // algorithms()' labels, comma-separated, for profiling
  std::string function;  // one function's name, for quick checks
  bool cost = true;
  Json gp_options = Json::object();   // overrides GP-BO's defaults, to compare settings
  Json tpe_options = Json::object();  // the same for the row "tpe" (our TPE's defaults)
  bool per_seed = false;              // every seed's best after 50 and 100 trials
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--first-seed") && i + 1 < argc) first_seed = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--no-optuna")) optuna = false;
    if (!std::strcmp(argv[i], "--more-functions")) more = true;
    if (!std::strcmp(argv[i], "--shape-functions")) shapes = true;
    if (!std::strcmp(argv[i], "--high-dims")) high_dims = true;
    if (!std::strcmp(argv[i], "--rugged")) rugged = true;
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    if (!std::strcmp(argv[i], "--function") && i + 1 < argc) function = argv[++i];
    if (!std::strcmp(argv[i], "--no-cost")) cost = false;
    if (!std::strcmp(argv[i], "--per-seed")) per_seed = true;
    if (!std::strcmp(argv[i], "--gp-options") && i + 1 < argc) gp_options = Json::parse(argv[++i]);
    if (!std::strcmp(argv[i], "--tpe-options") && i + 1 < argc) {
      tpe_options = Json::parse(argv[++i]);
    }
  }

  // 1. Quality.
  struct Row {
    std::string function, label, optuna;
    double best50, best100, ms, optimum;
    std::vector<double> at50, at100;  // per seed, in seed order
  };
  std::vector<Row> rows;
  const auto fns = bench::functions(more, shapes, high_dims, rugged);
  for (const Function& fn : fns) {
    if (!function.empty() && fn.name != function) continue;
    for (const Algorithm& a : algorithms()) {
      if (!only.empty() && (',' + only + ',').find(',' + a.label + ',') == std::string::npos) {
        continue;
      }
      std::vector<double> at50, at100;
      double suggest_s = 0;
      for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
        auto s = make(a, fn, 100, static_cast<uint64_t>(seed),
                      a.name == "gp"     ? gp_options
                      : a.label == "tpe" ? tpe_options
                                         : Json::object());
        const auto v = run(*s, fn, 100, suggest_s);
        at50.push_back(*std::min_element(v.begin(), v.begin() + 50));
        at100.push_back(*std::min_element(v.begin(), v.end()));
      }
      if (per_seed) {
        fmt::print("seeds {} {}:", fn.name, a.label);
        for (size_t k = 0; k < at50.size(); ++k) fmt::print(" {:.3g}/{:.3g}", at50[k], at100[k]);
        fmt::print("\n");
      }
      rows.push_back({fn.name, a.label, a.optuna, median(at50), median(at100),
                      1e3 * suggest_s / (seeds * 100.0), fn.optimum, at50, at100});
    }
  }

  // 2. Cost per suggestion with N completed trials: the first N are the
  // start-up phase (random), then the model's suggestions are timed.
  struct Cost {
    std::string label;
    int trials;
    double ms;
    double cpu_ms;  // the thread's CPU time: what the searcher costs on an idle machine
  };
  std::vector<Cost> costs;
  const Function& h6 = fns[1];
  for (const Algorithm& a : algorithms()) {
    if (!cost || a.label == "random" ||
        (!only.empty() && (',' + only + ',').find(',' + a.label + ',') == std::string::npos)) {
      continue;
    }
    for (int n : {100, 200, 1000}) {
      const int timed = a.label == "gp" ? (n < 1000 ? 10 : 3) : 50;
      auto s = make(a, h6, n + timed, 0, {{"n_startup_trials", n}});
      double ignored = 0, searcher_s = 0;
      run(*s, h6, n, ignored);
      const double cpu0 = thread_cpu_s();
      run(*s, h6, timed, searcher_s);
      costs.push_back(
          {a.label, n, 1e3 * searcher_s / timed, 1e3 * (thread_cpu_s() - cpu0) / timed});
    }
    if (a.name != "tpe") continue;
    for (int n : {100, 1000}) {
      const int timed = 50;
      auto s = make(a, h6, n + timed, 0);
      double ignored = 0, searcher_s = 0;
      run(*s, h6, n, ignored);
      const double cpu0 = thread_cpu_s();
      run(*s, h6, timed, searcher_s);
      costs.push_back({a.label + " (own history)", n, 1e3 * searcher_s / timed,
                       1e3 * (thread_cpu_s() - cpu0) / timed});
    }
  }

  std::map<std::string, Json> quality, overhead;
  if (optuna) {
    const std::string shared = "optuna_baseline.py";
    // The shared baseline: every sampler, on Branin and Hartmann6, seeds 0..N-1.
    if (first_seed == 0) quality = run_optuna(shared, fmt::format("quality --seeds {}", seeds));
    // Optuna's TPE on every function run here, on the same seeds.
    if (more || shapes || high_dims || rugged || first_seed != 0 || !function.empty()) {
      std::string names;
      for (const Function& fn : fns) {
        const bool ran = std::any_of(rows.begin(), rows.end(),
                                     [&](const Row& r) { return r.function == fn.name; });
        if (ran) names += (names.empty() ? "" : ",") + fn.name;
      }
      for (auto& [key, o] : run_optuna("optuna_functions.py",
                                       fmt::format("--seeds {} --first-seed {} --functions {}",
                                                   seeds, first_seed, names))) {
        quality[key] = o;
      }
    }
    if (cost) overhead = run_optuna(shared, "overhead");
  }
  if (quality.contains("env")) {
    fmt::print("Optuna {} (python {}), measured now; {} seeds each\n\n",
               quality["env"].value("optuna", "?"), quality["env"].value("python", "?"), seeds);
  }

  fmt::print(
      "Median best value over seeds {}..{} (lower is better). ratio = regret ours / regret "
      "Optuna's (< 1: ours better)\n",
      first_seed, first_seed + seeds - 1);
  fmt::print("{:<10} {:<17} {:>10} {:>10} {:>6}   {:>10} {:>10} {:>6}   {:>9} {:>9}  {}\n",
             "function", "searcher", "ours@50", "optuna@50", "ratio", "ours@100", "optuna@100",
             "ratio", "ms/trial", "optuna ms", "vs optuna sampler");
  for (const Row& r : rows) {
    const auto it = quality.find("quality/" + r.function + "/" + r.optuna);
    if (it == quality.end()) {
      fmt::print("{:<10} {:<17} {:>10.4f} {:>10} {:>6}   {:>10.4f} {:>10} {:>6}   {:>9.3f} {:>9}\n",
                 r.function, r.label, r.best50, "-", "-", r.best100, "-", "-", r.ms, "-");
      continue;
    }
    const Json& o = it->second;
    const double o50 = o["median_best_50"], o100 = o["median_best_100"], oms = o["ms_per_trial"];
    fmt::print(
        "{:<10} {:<17} {:>10.4f} {:>10.4f} {:>6}   {:>10.4f} {:>10.4f} {:>6}   {:>9.3f} {:>9.3f}  "
        "{}\n",
        r.function, r.label, r.best50, o50, ratio(r.best50, o50, r.optimum), r.best100, o100,
        ratio(r.best100, o100, r.optimum), r.ms, oms, r.optuna);
  }
  for (const auto& [key, o] : quality) {
    if (key.ends_with("/cmaes")) {
      fmt::print("  (Optuna cmaes on {}: {:.4f} @50, {:.4f} @100)\n", o.value("function", ""),
                 o.value("median_best_50", 0.0), o.value("median_best_100", 0.0));
    }
  }

  fmt::print(
      "\nms per suggestion (suggest + on_trial_complete) on Hartmann6 with N completed trials\n");
  const auto tpe_500 = overhead.find("overhead/memory/tpe");
  const auto tpe_quality = quality.find("quality/hartmann6/tpe");
  if (tpe_500 != overhead.end()) {
    fmt::print("  Optuna TPE in memory: {:.3f} ms/trial over 500 trials (overhead run)\n",
               tpe_500->second.value("ms_per_trial", 0.0));
  }
  fmt::print("{:<34} {:>6} {:>12} {:>12} {:>24}\n", "searcher", "N", "ms/suggest", "CPU ms",
             "Optuna TPE@500 / ours");
  for (const Cost& c : costs) {
    std::string vs = "-";
    if (tpe_500 != overhead.end()) {
      vs = fmt::format("{:.0f}x", tpe_500->second.value("ms_per_trial", 0.0) / c.ms);
    }
    fmt::print("{:<34} {:>6} {:>12.4f} {:>12.4f} {:>24}\n", c.label, c.trials, c.ms, c.cpu_ms, vs);
  }
  if (tpe_quality != quality.end()) {
    fmt::print("  (Optuna TPE over 100-trial Hartmann6 studies: {:.3f} ms/trial)\n",
               tpe_quality->second.value("ms_per_trial", 0.0));
  }

  // GP-BO against Optuna's TPE, with our TPE beside it.
  std::map<std::string, std::map<std::string, const Row*>> by_function;
  for (const Row& r : rows) by_function[r.function][r.label] = &r;
  bool header = false;
  int met = 0, judged = 0;
  for (const Function& fn : fns) {
    const auto it = quality.find("quality/" + fn.name + "/tpe");
    const auto& labels = by_function[fn.name];
    if (it == quality.end() || !labels.contains("gp")) continue;
    if (!header) {
      fmt::print(
          "\nGP-BO against Optuna's TPE, median best over seeds {}..{} (our TPE beside it; "
          "\"below\": GP-BO's seeds whose best is below Optuna's median)\n"
          "{:<10} {:>10} {:>10} {:>10}   {:>10} {:>10} {:>10} {:>9}   {}\n",
          first_seed, first_seed + seeds - 1, "function", "gp@50", "optuna@50", "tpe@50", "gp@100",
          "optuna@100", "tpe@100", "below@100", "gp >= optuna at 50 and 100");
      header = true;
    }
    const Row& gp = *labels.at("gp");
    const double o50 = it->second["median_best_50"], o100 = it->second["median_best_100"];
    const auto tpe = labels.find("tpe");
    const auto ours = [&](double Row::*field) {
      return tpe == labels.end() ? std::string("-") : fmt::format("{:.4f}", tpe->second->*field);
    };
    const bool ok = gp.best50 <= o50 && gp.best100 <= o100;
    met += ok;
    ++judged;
    const auto below =
        std::count_if(gp.at100.begin(), gp.at100.end(), [&](double v) { return v < o100; });
    fmt::print("{:<10} {:>10.4f} {:>10.4f} {:>10}   {:>10.4f} {:>10.4f} {:>10} {:>9}   {}\n",
               fn.name, gp.best50, o50, ours(&Row::best50), gp.best100, o100, ours(&Row::best100),
               fmt::format("{}/{}", below, gp.at100.size()), ok ? "yes" : "NO");
  }
  if (judged > 0) fmt::print("GP-BO at least as good as Optuna's TPE on {} of {}\n", met, judged);

  // GP-BO against our TPE, seed by seed: the medians, and on how many seeds
  // GP-BO's best is lower (a median over few seeds moves with one seed).
  header = false;
  for (const Function& fn : fns) {
    const auto& labels = by_function[fn.name];
    if (!labels.contains("gp") || !labels.contains("tpe")) continue;
    if (!header) {
      fmt::print(
          "\nGP-BO against our TPE, seeds {}..{}: medians, and the seeds where GP-BO's best is "
          "lower\n{:<10} {:>10} {:>10} {:>8}   {:>10} {:>10} {:>8}\n",
          first_seed, first_seed + seeds - 1, "function", "gp@50", "tpe@50", "gp wins", "gp@100",
          "tpe@100", "gp wins");
      header = true;
    }
    const Row& gp = *labels.at("gp");
    const Row& tpe = *labels.at("tpe");
    const auto wins = [&](const std::vector<double>& a, const std::vector<double>& b) {
      int n = 0;
      for (size_t i = 0; i < a.size(); ++i) n += a[i] < b[i];
      return fmt::format("{}/{}", n, a.size());
    };
    fmt::print("{:<10} {:>10.4f} {:>10.4f} {:>8}   {:>10.4f} {:>10.4f} {:>8}\n", fn.name, gp.best50,
               tpe.best50, wins(gp.at50, tpe.at50), gp.best100, tpe.best100,
               wins(gp.at100, tpe.at100));
  }
  return 0;
}
