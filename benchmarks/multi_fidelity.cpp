// multi_fidelity: what a model-based searcher adds to early stopping, on
// learning curves whose best configuration is a region of the space.
//
// Each run pairs a searcher with a scheduler, both the real ones
// (make_searcher, make_scheduler), driven in-process one trial at a time by
// the controller's rules (create a trial while none is pending; end the
// trials the scheduler gives up on; run the one it chooses until it pauses,
// stops or finishes), so hundreds of runs take seconds. Anchor: ASHA with
// random search (Ray's default early stopping), measured in the same run.
//
//   asha+random      ASHA (grace 1, rf 3, max_t 81) on `trials` random configs
//   hyperband+random    HyperBand (max_t 81, eta 3) on random configs,
//                       the least complete bracket served first
//   hb_for_bohb+random  HyperBand with for_bohb (the largest bracket opened
//                       and served first, as Ray's HyperBandForBOHB) on
//                       random configs
//   hb_for_bohb+bohb    the same with BOHB (search/internal/bohb.h), as Ray's TuneBOHB
//                       with HyperBandForBOHB
//   async_hb+random     HyperBand with asynchronous = true (ASHA's stopping
//                       rule over HyperBand's brackets; same max_t, eta and
//                       one trial at a time) on random configs
//   async_hb+bohb       the same with BOHB (DEHB's and Optuna's pairing)
//   asha+tpe            ASHA with TPE (which sees stopped trials' last values)
//
// The curves (train/builtins/curve_families.h, which simulated ranks report too):
// accuracy(t) = ceiling(x) (1 - exp(-speed(x) t)) over a learning rate
// (log), momentum, layer count and dropout; the ceiling is a bowl around lr
// 1e-2, momentum 0.9, 5 layers, dropout 0.25. --curves
// crossing (the default): high rates learn fast but plateau lower, so the
// low rungs rank the best region's configs about as well as chance.
// --curves faithful: better configs also learn faster, as in well-behaved
// training, so every rung ranks configs about as max_t does. The header
// prints each rung's Kendall's tau with max_t for the family run.
//
// Printed per run, medians over seeds: the anchor's iterations and final
// best; each run's best at the anchor's iteration count; and the iterations
// each needs to reach the anchor's final best ("-": never within the
// anchor's count). Goal, for each BOHB pairing: reach it in at most half the
// anchor's iterations and be better at equal iterations.
//
// Also printed: of the suggestions, grouped by index, the share whose
// config reaches the anchor's final best when trained to max_t: how good
// the searcher's proposals are, apart from which ones HyperBand trains on;
// and of those good suggestions, the share the scheduler ran to max_t
// within the anchor's iterations and the share it stopped by iteration 3.
// --per-seed prints every seed's numbers. --oracle-model tells the
// searchers each result's accuracy at max_t in place of the real one (the
// schedulers still see the real one): what a model that knew every
// config's final value could do with the same scheduler. With BOHB, whose
// model trusts the trials stopped below its budget as far as the rungs
// agree, the told values agree perfectly although the scheduler stopped
// those trials on the real ones, so read that row with care.
//
// Usage: multi_fidelity [--seeds N] [--first-seed S] [--trials N] [--bohb-options JSON]
//                       [--curves crossing|faithful] [--per-seed] [--oracle-model]
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "schedulers/factory.h"
#include "schedulers/trial_scheduler.h"
#include "search/factory.h"
#include "search/internal/budget_history.h"
#include "train/builtins/curve_families.h"

namespace {

using tune::Json;
using tune::TrialStatus;
namespace schedulers = tune::schedulers;
namespace search = tune::search;

constexpr int64_t kMaxT = 81;
// Suggestions by index, grouped from these on: with plain HyperBand 0-4 are
// its first bracket (s = 0), 5-12 its second, the rest later brackets; with
// for_bohb 0-80 are its first bracket (s = 4, from milestone 1).
constexpr std::array<size_t, 5> kSuggestionGroups = {0, 5, 13, 30, 60};

tune::ParamSpace space() {
  tune::ParamSpace s;
  s.set("lr", tune::loguniform(1e-4, 1));
  s.set("momentum", tune::uniform(0, 0.99));
  s.set("layers", tune::randint(1, 9));
  s.set("dropout", tune::uniform(0, 0.6));
  return s;
}

// --curves and --oracle-model (see the header).
tune::sim::CurveFamily curves = tune::sim::CurveFamily::kCrossing;
bool oracle_model = false;

double accuracy(const Json& c, int64_t t) {
  return tune::sim::family_accuracy(curves, tune::sim::FamilyPoint::from_config(tune::Config(c)),
                                    t);
}

// Kendall's tau between the accuracies of `configs` after `a` and after `b`
// iterations.
double kendall_tau(const std::vector<Json>& configs, int64_t a, int64_t b) {
  std::vector<std::pair<double, double>> pairs;
  for (const Json& c : configs) pairs.emplace_back(accuracy(c, a), accuracy(c, b));
  return tune::search::detail::rank_agreement(pairs);
}

// How faithfully HyperBand's rungs rank configs, against max_t: over 300
// random configs, and among the best 30 of 300 at max_t.
void print_fidelity() {
  tune::Rng rng(12345);
  const tune::ParamSpace s = space();
  std::vector<Json> configs;
  for (int i = 0; i < 300; ++i) configs.push_back(s.resolve(0, rng));
  std::vector<Json> best = configs;
  std::sort(best.begin(), best.end(),
            [](const Json& a, const Json& b) { return accuracy(a, kMaxT) > accuracy(b, kMaxT); });
  best.resize(30);
  fmt::print(
      "Kendall's tau of each rung's ranking with max_t's, over random configs (among the "
      "best tenth):");
  for (int64_t t = 1; t < kMaxT; t *= 3) {
    fmt::print(" t={} {:.2f} ({:.2f})", t, kendall_tau(configs, t, kMaxT),
               kendall_tau(best, t, kMaxT));
  }
  fmt::print("\n");
}

struct Trial {
  std::string id;
  Json config;
  TrialStatus status = TrialStatus::kPending;
  int64_t iteration = 0;
  Json last_result;
};

schedulers::TrialView view_of(const Trial& t) {
  return {t.id, t.status, t.config, t.last_result.is_null() ? nullptr : &t.last_result,
          t.iteration};
}

// The best accuracy seen after each iteration, until `max_iterations` or
// until the searcher and the scheduler have nothing left to run; `configs`
// gets the configs suggested, in order, and `ran_to` the iterations each ran.
std::vector<double> run(const std::string& searcher_name, const Json& searcher_options,
                        const std::string& scheduler_name, const Json& scheduler_options,
                        int64_t num_samples, uint64_t seed, int64_t max_iterations,
                        std::vector<Json>* configs = nullptr,
                        std::vector<int64_t>* ran_to = nullptr) {
  auto searcher = search::make_searcher(searcher_name, searcher_options,
                                        {.num_samples = num_samples, .seed = seed});
  auto scheduler = schedulers::make_scheduler(scheduler_name, scheduler_options);
  searcher->set_search_properties("accuracy", tune::Mode::kMax, space());
  scheduler->set_search_properties("accuracy", tune::Mode::kMax);
  std::map<std::string, Trial> trials;
  std::vector<std::string> order;
  std::vector<double> best;
  double best_so_far = 0;
  bool finished = false;
  // What the searcher is told of a result.
  auto told = [&](const Trial& t) {
    Json r = t.last_result;
    if (oracle_model && !r.is_null()) r["accuracy"] = accuracy(t.config, kMaxT);
    return r;
  };
  auto end = [&](Trial& t) {
    t.status = TrialStatus::kTerminated;
    const Json last = told(t);
    searcher->on_trial_complete(t.id, last.is_null() ? nullptr : &last, false);
  };
  while (static_cast<int64_t>(best.size()) < max_iterations) {
    const auto pending = std::count_if(trials.begin(), trials.end(), [](const auto& kv) {
      return kv.second.status == TrialStatus::kPending;
    });
    if (!finished && pending < searcher->max_pending_trials()) {
      const std::string id = fmt::format("t{:05d}", order.size());
      search::Suggestion s = searcher->suggest(id);
      if (s.status == search::Suggestion::Status::kConfig) {
        if (configs) configs->push_back(s.config);
        trials[id] = {id, std::move(s.config)};
        order.push_back(id);
        scheduler->on_trial_add(view_of(trials[id]));
      } else {
        finished = true;
      }
    }
    for (const std::string& id : scheduler->take_trials_to_stop()) {
      Trial& t = trials.at(id);
      if (t.status != TrialStatus::kPaused && t.status != TrialStatus::kPending) continue;
      end(t);
      scheduler->on_trial_remove(view_of(t));
    }
    std::vector<Trial*> waiting;
    std::vector<schedulers::TrialView> views;
    for (const std::string& id : order) {
      Trial& t = trials.at(id);
      if (t.status == TrialStatus::kPending || t.status == TrialStatus::kPaused) {
        waiting.push_back(&t);
        views.push_back(view_of(t));
      }
    }
    if (waiting.empty()) break;
    int pick = scheduler->choose_trial_to_run(views);
    if (pick < 0 || pick >= static_cast<int>(waiting.size())) pick = 0;  // nothing else runs
    Trial& t = *waiting[pick];
    t.status = TrialStatus::kRunning;
    while (static_cast<int64_t>(best.size()) < max_iterations) {
      ++t.iteration;
      const double acc = accuracy(t.config, t.iteration);
      t.last_result = {{"accuracy", acc}, {"training_iteration", t.iteration}};
      best_so_far = std::max(best_so_far, acc);
      best.push_back(best_so_far);
      searcher->on_trial_result(t.id, told(t));
      const tune::Decision d = scheduler->on_trial_result(view_of(t), t.last_result);
      if (t.iteration >= kMaxT) {  // the trainable ends here
        scheduler->on_trial_complete(view_of(t), &t.last_result);
        end(t);
        break;
      }
      if (d == tune::Decision::kStop) {
        scheduler->on_trial_remove(view_of(t));
        end(t);
        break;
      }
      if (d == tune::Decision::kPause) {
        t.status = TrialStatus::kPaused;
        break;
      }
    }
  }
  if (ran_to) {
    for (const std::string& id : order) ran_to->push_back(trials.at(id).iteration);
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 10;
  int first_seed = 0;
  int64_t num_trials = 256;
  bool per_seed = false;
  Json bohb_options = Json::object();
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--bohb-options")) bohb_options = Json::parse(argv[++i]);
    if (!std::strcmp(argv[i], "--seeds"))
      seeds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--first-seed"))
      first_seed = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--trials"))
      num_trials = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--curves")) {
      const std::string name = argv[++i];
      const auto family = tune::sim::curve_family_from_string(name);
      if (!family) {
        fmt::print(stderr, "--curves: crossing or faithful, got '{}'\n", name);
        return 2;
      }
      curves = *family;
    }
  }
  for (int i = 1; i < argc; ++i) {
    per_seed = per_seed || !std::strcmp(argv[i], "--per-seed");
    oracle_model = oracle_model || !std::strcmp(argv[i], "--oracle-model");
  }
  const Json asha = {{"max_t", kMaxT}, {"grace_period", 1}, {"reduction_factor", 3}};
  const Json hyperband = {{"max_t", kMaxT}, {"reduction_factor", 3}};
  Json for_bohb = hyperband;
  for_bohb["for_bohb"] = true;
  Json async_hb = hyperband;
  async_hb["asynchronous"] = true;
  struct Run {
    std::string label, searcher, scheduler;
    Json scheduler_options;
  };
  const std::vector<Run> runs = {{"hyperband+random", "random", "hyperband", hyperband},
                                 {"hb_for_bohb+random", "random", "hyperband", for_bohb},
                                 {"hb_for_bohb+bohb", "bohb", "hyperband", for_bohb},
                                 {"async_hb+random", "random", "hyperband", async_hb},
                                 {"async_hb+bohb", "bohb", "hyperband", async_hb},
                                 {"asha+tpe", "tpe", "asha", asha}};

  std::vector<double> anchor_iterations, anchor_best;
  std::map<std::string, std::vector<double>> at_equal, to_reach;
  // Per run and group of suggestion indices: (suggestions whose config
  // reaches the anchor's final best at max_t, suggestions).
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> good_suggestions;
  // Per run, of those good suggestions: how many the scheduler ran to max_t,
  // how many it stopped by iteration 3 (at the rungs where fast starters
  // lead), how many there were.
  struct Fate {
    int64_t to_max_t = 0, by_3 = 0, all = 0;
  };
  std::map<std::string, Fate> good_fate;
  for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
    const auto s = static_cast<uint64_t>(seed);
    const auto anchor = run("random", Json::object(), "asha", asha, num_trials, s, INT64_MAX);
    const auto budget = static_cast<int64_t>(anchor.size());
    anchor_iterations.push_back(static_cast<double>(budget));
    anchor_best.push_back(anchor.back());
    for (const Run& r : runs) {
      std::vector<Json> configs;
      std::vector<int64_t> ran_to;
      Json scheduler_options = r.scheduler_options;
      if (scheduler_options.contains("asynchronous")) scheduler_options["seed"] = seed;
      const auto curve = run(r.searcher, r.searcher == "bohb" ? bohb_options : Json::object(),
                             r.scheduler, scheduler_options, r.searcher == "random" ? 1000000 : -1,
                             s, budget, &configs, &ran_to);
      at_equal[r.label].push_back(curve.back());
      auto& hits = good_suggestions[r.label];
      hits.resize(kSuggestionGroups.size());
      for (size_t i = 0; i < configs.size(); ++i) {
        const size_t g = std::upper_bound(kSuggestionGroups.begin(), kSuggestionGroups.end(), i) -
                         kSuggestionGroups.begin() - 1;
        const bool good = accuracy(configs[i], kMaxT) >= anchor.back();
        hits[g].first += good;
        ++hits[g].second;
        if (good) {
          Fate& f = good_fate[r.label];
          f.to_max_t += ran_to[i] >= kMaxT;
          f.by_3 += ran_to[i] >= 1 && ran_to[i] <= 3;
          ++f.all;
        }
      }
      if (per_seed) {
        const auto h =
            std::find_if(curve.begin(), curve.end(), [&](double b) { return b >= anchor.back(); });
        fmt::print("seed {} {:<20} anchor best {:.5f} in {} its; reached at {}, best {:.5f}\n",
                   seed, r.label, anchor.back(), budget,
                   h == curve.end() ? std::string("-") : std::to_string(h - curve.begin() + 1),
                   curve.back());
      }
      const auto hit =
          std::find_if(curve.begin(), curve.end(), [&](double b) { return b >= anchor.back(); });
      // Never reaching it counts as twice the budget, so medians stay defined.
      to_reach[r.label].push_back(hit == curve.end()
                                      ? 2.0 * static_cast<double>(budget)
                                      : static_cast<double>(hit - curve.begin() + 1));
    }
  }

  const double iterations = median(anchor_iterations);
  fmt::print(
      "{} learning curves over lr, momentum, layers, dropout (best region near lr 1e-2); seeds "
      "{}..{}, medians.\n",
      curves == tune::sim::CurveFamily::kCrossing ? "Crossing" : "Faithful", first_seed,
      first_seed + seeds - 1);
  print_fidelity();
  fmt::print("Anchor asha+random: {} trials, {:.0f} iterations, final best {:.5f}\n\n", num_trials,
             iterations, median(anchor_best));
  fmt::print("{:<20} {:>22} {:>22} {:>12}\n", "run", "best at anchor's its", "its to anchor's best",
             "/ anchor's");
  std::map<std::string, std::pair<double, double>> bohb_goal;  // label -> (ratio, gain)
  for (const Run& r : runs) {
    const double reach = median(to_reach[r.label]);
    const double ratio = reach / iterations;
    std::vector<double> gain;
    for (size_t i = 0; i < anchor_best.size(); ++i)
      gain.push_back(at_equal[r.label][i] - anchor_best[i]);
    fmt::print("{:<20} {:>22.5f} {:>22} {:>12}\n", r.label, median(at_equal[r.label]),
               reach > iterations ? std::string("-") : fmt::format("{:.0f}", reach),
               reach > iterations ? std::string("-") : fmt::format("{:.3f}", ratio));
    if (r.searcher == "bohb") bohb_goal[r.label] = {ratio, median(gain)};
  }
  fmt::print(
      "\nShare of the suggestions, by index, whose config reaches the anchor's final best at "
      "max_t (all seeds)\n{:<20}",
      "run");
  for (size_t g = 0; g < kSuggestionGroups.size(); ++g) {
    fmt::print(" {:>9}",
               g + 1 < kSuggestionGroups.size()
                   ? fmt::format("{}-{}", kSuggestionGroups[g], kSuggestionGroups[g + 1] - 1)
                   : fmt::format("{}+", kSuggestionGroups[g]));
  }
  fmt::print(" {:>9} {:>9}", "to max_t", "out by 3");
  for (const Run& r : runs) {
    fmt::print("\n{:<20}", r.label);
    for (const auto& [good, all] : good_suggestions[r.label]) {
      fmt::print(" {:>9}", all ? fmt::format("{:.3f}", double(good) / double(all)) : "-");
    }
    const Fate& f = good_fate[r.label];
    auto share = [&](int64_t n) {
      return f.all ? fmt::format("{:.3f}", double(n) / double(f.all)) : std::string("-");
    };
    fmt::print(" {:>9} {:>9}", share(f.to_max_t), share(f.by_3));
  }
  fmt::print("\n");
  fmt::print("\n");
  for (const auto& [label, goal] : bohb_goal) {
    const auto [ratio, gain] = goal;
    fmt::print(
        "goal: {} reaches asha+random's final best in at most half its iterations "
        "({:.3f} <= 0.5) and beats it at equal iterations (median gain {:+.5f} > 0): {}\n",
        label, ratio, gain, ratio <= 0.5 && gain > 0 ? "met" : "NOT met");
  }
  return 0;
}
