// benchmarks/scale: the experiment store at 1,000 concurrent trials.
//
// Trials report interleaved results, one a turn each (or a share of them a
// turn), under ASHA, and are written through ExperimentStore exactly as the
// controller's TrialTable and TrialReports write them: put_trial on every
// status change (which adds its trial_events row), append_result per
// result, the scheduler's state once a second, one commit (flush) per
// event-loop turn. The store's figures time the store's calls alone, in CPU time
// (building the metrics is not its cost); ASHA's decisions have their own.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <random>

#include "benchmarks/scale/figure.h"
#include "schedulers/factory.h"
#include "schedulers/trial_scheduler.h"
#include "storage/experiment_store.h"

namespace scale {
namespace {

namespace fs = std::filesystem;
using tune::Json;
using tune::Mode;
using tune::TrialStatus;
using Clock = std::chrono::steady_clock;

// Seconds of CPU this thread has used: the store's and ASHA's figures are
// its work, which other processes on a shared machine do not inflate (a
// commit under synchronous=NORMAL waits for no disk; a checkpoint's fsync
// would not count).
double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

constexpr double kResultsPerSecondGoal = 20000;
constexpr double kDecileRatioGoal = 1.3;
// Seconds of results between two saves of the scheduler's state: the
// controller saves it at most once a second, here at the goal's rate.
constexpr int64_t kResultsPerStateSave = 20000;

Json asha_options() { return {{"max_t", 50}, {"grace_period", 10}, {"reduction_factor", 3}}; }

Json sweep_spec() {
  Json scheduler = asha_options();
  scheduler["type"] = "asha";
  return {{"sweep",
           {{"metric", "loss"},
            {"mode", "min"},
            {"param_space",
             {{"lr", {{"loguniform", {1e-4, 1e-1}}}},
              {"momentum", {{"uniform", {0.5, 0.99}}}},
              {"layers", {{"randint", {1, 5}}}},
              {"optimizer", {{"name", {{"choice", {"sgd", "adam"}}}}}}}},
            {"scheduler", scheduler}}}};
}

// A synthetic experiment: trials run `concurrency` at a time until `total`
// have been created; the last ones are left running, as in a live sweep.
class Synthetic {
 public:
  Synthetic(const fs::path& dir, const std::string& name, int64_t total, int concurrency,
            uint64_t seed)
      : name_(name),
        dir_(dir),
        total_(total),
        concurrency_(concurrency),
        rng_(seed),
        store_(tune::storage::ExperimentStore::open(dir)),
        scheduler_(tune::schedulers::make_scheduler("asha", asha_options())) {
    scheduler_->set_search_properties("loss", Mode::kMin);
    timed([&] {
      store_.put_experiment({.name = name,
                             .metric = "loss",
                             .mode = Mode::kMin,
                             .spec = sweep_spec(),
                             .created_at = now(),
                             .status = tune::ExperimentStatus::kRunning});
    });
    while (static_cast<int>(running_.size()) < concurrency_ && created_ < total_) create();
    timed([&] { store_.flush(); });
  }

  // One event-loop turn: each running trial reports with probability
  // `share`, in random order; the trials ASHA stops or that reach max_t end
  // and new ones take their places. One commit.
  void turn(double share) {
    std::vector<size_t> order;
    std::bernoulli_distribution reports(share);
    for (size_t i = 0; i < running_.size(); ++i) {
      if (share >= 1 || reports(rng_)) order.push_back(i);
    }
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<size_t> ended;
    for (size_t i : order) {
      if (report(running_[i])) ended.push_back(i);
    }
    std::sort(ended.rbegin(), ended.rend());
    for (size_t i : ended) {
      running_[i] = std::move(running_.back());
      running_.pop_back();
    }
    while (static_cast<int>(running_.size()) < concurrency_ && created_ < total_) create();
    if (results_ - results_at_save_ >= kResultsPerStateSave) {
      results_at_save_ = results_;
      const double start = cpu_seconds();
      // As the controller saves it: by what changed since the last save.
      const tune::StateParts state = scheduler_->save_parts();
      const double saved = cpu_seconds() - start;
      timed([&] { store_.put_state_parts("scheduler", state); });
      last_state_save_s_ = cpu_seconds() - start;
      last_state_encode_s_ = saved;
    }
    timed([&] { store_.flush(); });
  }

  bool all_created() const { return created_ >= total_; }
  int64_t created() const { return created_; }
  int64_t results() const { return results_; }
  // CPU seconds spent in the store's calls so far.
  double store_s() const { return store_s_; }
  // CPU seconds in the scheduler's on_trial_result so far.
  double scheduler_s() const { return scheduler_s_; }
  // The last save of the scheduler's state: seconds in all, and in save_parts() alone.
  double last_state_save_s() const { return last_state_save_s_; }
  double last_state_encode_s() const { return last_state_encode_s_; }

 private:
  struct Running {
    std::string id;
    int64_t index = 0;
    Json config;
    double quality = 0;  // the loss it converges to
    double created_at = 0;
    Json last;
  };

  template <class F>
  void timed(F&& f) {
    const double start = cpu_seconds();
    f();
    store_s_ += cpu_seconds() - start;
  }

  double now() const { return 1.7e9 + static_cast<double>(results_) * 1e-4; }

  tune::storage::TrialRecord record(const Running& t, TrialStatus status,
                                    const std::string& reason) const {
    return {.trial_id = t.id,
            .trial_index = t.index,
            .config = t.config,
            .status = status,
            .status_reason = reason,
            .trial_dir = (dir_ / "trials" / t.id).string(),
            .created_at = t.created_at,
            .started_at = status == TrialStatus::kPending ? std::nullopt
                                                          : std::optional<double>(t.created_at),
            .finished_at =
                status == TrialStatus::kTerminated ? std::optional<double>(now()) : std::nullopt,
            .last_iteration = t.last.is_object() ? t.last.value("training_iteration", 0) : 0};
  }

  void create() {
    std::uniform_real_distribution<double> unit(0, 1);
    Running t;
    t.index = created_++;
    t.id = fmt::format("{}_{:05d}", name_, t.index);
    t.config = {{"lr", std::pow(10.0, -4 + 3 * unit(rng_))},
                {"momentum", 0.5 + 0.49 * unit(rng_)},
                {"layers", 1 + static_cast<int>(4 * unit(rng_))},
                {"optimizer", {{"name", unit(rng_) < 0.5 ? "sgd" : "adam"}}}};
    t.quality = 0.05 + 0.5 * std::abs(std::log10(t.config["lr"].get<double>()) + 2.5) / 1.5 +
                0.1 * unit(rng_);
    t.created_at = now();
    scheduler_->on_trial_add({t.id, TrialStatus::kPending, t.config});
    // As TrialTable::create and RunStart::launch write them.
    timed([&] { store_.put_trial(record(t, TrialStatus::kPending, "created")); });
    timed([&] {
      store_.put_trial(record(t, TrialStatus::kRunning, "started (attempt 0)"), t.created_at);
    });
    running_.push_back(std::move(t));
  }

  // Appends one result of `t`; true when the trial ended with it.
  bool report(Running& t) {
    std::normal_distribution<double> noise(0, 0.01);
    const int64_t iteration = (t.last.is_object() ? t.last.value("training_iteration", 0) : 0) + 1;
    const double loss = t.quality + std::exp(-static_cast<double>(iteration) / 12) + noise(rng_);
    Json metrics = {{"loss", loss},
                    {"accuracy", 1 - loss / 2},
                    {"grad_norm", 1.0 / iteration + std::abs(noise(rng_))},
                    {"samples_per_s", 5000 + 100 * noise(rng_)},
                    {"lr_now", t.config["lr"].get<double>() / iteration}};
    Json result = metrics;
    result["training_iteration"] = iteration;
    result["time_total_s"] = 0.5 * static_cast<double>(iteration);
    result["trial_id"] = t.id;
    timed([&] {
      store_.append_result(
          {t.id, iteration, now(), 0.5, 0.5 * static_cast<double>(iteration), std::move(metrics)});
    });
    ++results_;
    t.last = std::move(result);
    const tune::schedulers::TrialView view{t.id, TrialStatus::kRunning, t.config, &t.last};
    const double decided = cpu_seconds();
    const tune::Decision decision = scheduler_->on_trial_result(view, t.last);
    scheduler_s_ += cpu_seconds() - decided;
    if (decision != tune::Decision::kStop && iteration < asha_options()["max_t"].get<int64_t>()) {
      return false;
    }
    const std::string reason =
        decision == tune::Decision::kStop
            ? "stopped by scheduler AsyncHyperBand: " + scheduler_->decision_reason(t.id)
            : fmt::format("finished at iteration {}", iteration);
    scheduler_->on_trial_complete({t.id, TrialStatus::kTerminated, t.config, &t.last}, &t.last);
    timed([&] { store_.put_trial(record(t, TrialStatus::kTerminated, reason), now()); });
    return true;
  }

  std::string name_;
  fs::path dir_;
  int64_t total_;
  int concurrency_;
  std::mt19937_64 rng_;
  tune::storage::ExperimentStore store_;
  std::unique_ptr<tune::schedulers::TrialScheduler> scheduler_;
  std::vector<Running> running_;
  int64_t created_ = 0;
  int64_t results_ = 0;
  int64_t results_at_save_ = 0;
  double store_s_ = 0;
  double scheduler_s_ = 0;
  double last_state_save_s_ = 0;
  double last_state_encode_s_ = 0;
};

// Results/s through the store with 1,000 trials running, each turn holding
// `share` of them.
Figure sustained(const Options& options, double share, int concurrency) {
  const fs::path dir = options.dir / fmt::format("sustained_{}", static_cast<int>(share * 100));
  Synthetic experiment(dir, "sustained", int64_t{1} << 40, concurrency, 1);
  const int64_t before = experiment.results();
  const double store_before = experiment.store_s();
  const int64_t wanted = options.quick ? 20000 : 300000;
  while (experiment.results() - before < wanted) experiment.turn(share);
  const double rate =
      static_cast<double>(experiment.results() - before) / (experiment.store_s() - store_before);
  return {fmt::format("store: results per CPU s, {} trials running, ~{} results a commit",
                      thousands(concurrency), thousands(share * concurrency)),
          thousands(rate), ">= " + thousands(kResultsPerSecondGoal), rate >= kResultsPerSecondGoal};
}

}  // namespace

std::vector<Figure> store_figures(const Options& options, WrittenExperiment& written) {
  std::vector<Figure> out;
  const int concurrency = 1000;
  out.push_back(sustained(options, 1.0, concurrency));
  out.push_back(sustained(options, 0.1, concurrency));

  // The large experiment: store seconds per trial by the tenth of the
  // trials being created while they were spent.
  written.runs = options.dir / "runs";
  written.name = "scale";
  const int64_t total = options.quick ? 5000 : 100000;
  const auto start = Clock::now();
  // --quick: fewer at once, so that every tenth of the trials gets turns.
  Synthetic experiment(written.runs / written.name, written.name, total,
                       options.quick ? 100 : concurrency, 2);
  std::array<double, 10> decile_s{}, decile_decide_s{};
  std::array<int64_t, 10> decile_results{};
  while (!experiment.all_created()) {
    const size_t decile = std::min<size_t>(experiment.created() * 10 / total, 9);
    const double before = experiment.store_s(), decided = experiment.scheduler_s();
    const int64_t results = experiment.results();
    experiment.turn(1.0);
    decile_s[decile] += experiment.store_s() - before;
    decile_decide_s[decile] += experiment.scheduler_s() - decided;
    decile_results[decile] += experiment.results() - results;
  }
  written.trials = experiment.created();
  written.results = experiment.results();
  const double per_trial = static_cast<double>(total) / 10;
  const double first = decile_s[0] / per_trial * 1e6, last = decile_s[9] / per_trial * 1e6;
  const double ratio = last / first;
  out.push_back({fmt::format("store: {} trials written ({} results, {:.1f} CPU s in the store, "
                             "{:.1f} s wall)",
                             thousands(static_cast<double>(total)),
                             thousands(static_cast<double>(written.results)), experiment.store_s(),
                             seconds_since(start)),
                 fmt::format("{:.0f} results per CPU s", written.results / experiment.store_s()),
                 "",
                 {}});
  out.push_back(
      {fmt::format("controller: ASHA's state saved (once a second), at {} trials",
                   thousands(static_cast<double>(total))),
       fmt::format("{:.1f} ms ({:.1f} in save_parts())", experiment.last_state_save_s() * 1e3,
                   experiment.last_state_encode_s() * 1e3),
       "",
       {}});
  auto per_result_us = [&](size_t d) {
    return decile_decide_s[d] / static_cast<double>(std::max<int64_t>(1, decile_results[d])) * 1e6;
  };
  out.push_back({"controller: ASHA's decision, us per result, first tenth -> last tenth",
                 fmt::format("{:.1f} -> {:.1f} ({:.1f}x)", per_result_us(0), per_result_us(9),
                             per_result_us(9) / per_result_us(0)),
                 "flat (<= 1.3x)", per_result_us(9) <= kDecileRatioGoal * per_result_us(0)});
  out.push_back({"store: us per trial, first tenth -> last tenth",
                 fmt::format("{:.0f} -> {:.0f} ({:.2f}x)", first, last, ratio),
                 fmt::format("<= {:.1f}x", kDecileRatioGoal), ratio <= kDecileRatioGoal});
  return out;
}

}  // namespace scale
