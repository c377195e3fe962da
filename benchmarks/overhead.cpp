// Controller overhead at scale, measured through the CLI a user runs: each
// workload is a sweep file run by `tunerun run -q` in a child process, timed
// from fork to exit, with the controller's peak RSS from wait4's rusage
// (the controller's own: its workers are its children, reaped by it). The
// results and iterations are counted in the experiment's SQLite file.
//
// Beside each figure: the ideal (what the work itself takes), the ratio, and
// Ray Tune's published figure for the same kind of workload where it has one.
// `--tunerun PATH` measures another build (an older one, for before/after).
//
//   build/benchmarks/overhead [--tunerun PATH] [--trials 1000,10000,100000]
//                             [--only trials,slots,rate,schedulers] [--quick]
//                             [--iteration-ms MS]
//
// --iteration-ms gives the schedulers rows' iterations that much work (a
// sleep; 0, the default, as scheduler_efficiency runs them), to read the
// pausing schedulers' fixed costs against an iteration's. Beside each
// pausing scheduler's row: the least its durable checkpoints alone cost
// against FIFO's iterations (DESIGN section 5: each is fsynced before its
// report is answered), from one checkpoint published here the way a rank
// and the controller publish one.

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "storage/checkpoint_layout.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Ray Tune's release tests (the figures the issue quotes).
constexpr double kRayResultsPerSecond = 4800;    // one node, <= 20% overhead
constexpr double kRayShortTrialOverhead = 0.14;  // 10,000 x 1 s trials

struct Options {
  std::string tunerun = TUNERUN_BINARY;
  std::vector<int64_t> trial_counts = {1000, 10000, 100000};
  std::set<std::string> only;
  bool quick = false;
  double iteration_ms = 0;  // the schedulers rows' work per iteration
};

struct Outcome {
  double wall_s = 0;
  double peak_rss_mb = 0;
  int64_t trials = 0;
  int64_t results = 0;
  int64_t checkpoints = 0;  // published, clones included
  int exit_code = 0;
};

class Bench {
 public:
  explicit Bench(Options options)
      : options_(std::move(options)), dir_(fs::temp_directory_path() / "tunerun_overhead") {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Bench() { fs::remove_all(dir_); }

  // Runs the sweep `body` (everything but name and storage) as experiment `name`.
  Outcome run(const std::string& name, const std::string& body) {
    const fs::path sweep = dir_ / (name + ".toml");
    const fs::path storage = dir_ / "runs" / std::to_string(++runs_);  // kept to the end
    std::ofstream(sweep) << fmt::format("name = \"{}\"\nstorage_path = \"{}\"\n{}", name,
                                        storage.string(), body);
    Outcome o;
    const auto start = Clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      execl(options_.tunerun.c_str(), options_.tunerun.c_str(), "run", "-q", sweep.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    o.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    o.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    count_rows(storage / name / "experiment.db", o);
    if (o.exit_code != 0) fmt::print("  ({} exited with {})\n", name, o.exit_code);
    // Runs are removed at the end only: on ext4 without a journal (these
    // machines' disk) a new inode is not placed where one was freed in the
    // last minute, and after a run's 100,000 directories are removed each
    // next mkdir scans for a free one (0.3 ms instead of 0.03), measuring
    // the benchmark's own cleanup.
    return o;
  }

  bool wants(const std::string& part) const {
    return options_.only.empty() || options_.only.count(part) > 0;
  }
  const Options& options() const { return options_; }
  const fs::path& dir() const { return dir_; }

 private:
  static void count_rows(const fs::path& db_path, Outcome& o) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      o.trials = count(db, "SELECT count(*) FROM trials");
      o.results = count(db, "SELECT count(*) FROM results");
      o.checkpoints = count(db, "SELECT count(*) FROM checkpoints");
    }
    sqlite3_close(db);
  }
  static int64_t count(sqlite3* db, const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    return n;
  }

  Options options_;
  fs::path dir_;
  int runs_ = 0;
};

std::string noop_sweep(int64_t trials, int64_t iterations, int concurrent, bool reuse,
                       double results_per_s = 0) {
  return fmt::format(
      "metric = \"value\"\nmode = \"max\"\nnum_samples = {}\nmax_concurrent_trials = {}\n"
      "reuse_workers = {}\n[trainable]\nbuiltin = \"noop\"\ncpus_per_worker = {}\n"
      "[param_space]\niterations = {}\nresults_per_s = {}\nx = {{ uniform = [0, 1] }}\n"
      "[resources]\ncpus = 2\n",
      trials, concurrent, reuse, 2.0 / concurrent, iterations, results_per_s);
}

void print_header() {
  fmt::print("{:<44} {:>12} {:>12} {:>8}  {}\n", "workload", "ideal", "ours", "ratio", "Ray Tune");
}

// One-report trials, two at a time with reused ranks: trials/s and peak RSS.
// The ratio is against the first (smallest) N of the same run: flat cost
// keeps it near 1.
void trials_at_scale(Bench& bench) {
  std::optional<double> first_rate;
  for (int64_t n : bench.options().trial_counts) {
    const Outcome o = bench.run(fmt::format("trials_{}", n), noop_sweep(n, 1, 2, true));
    const double rate = static_cast<double>(o.trials) / o.wall_s;
    if (!first_rate) first_rate = rate;
    fmt::print("{:<44} {:>12} {:>9.0f}/s {:>7.2f}x {}\n",
               fmt::format("{} one-report trials, reuse: trials/s", n), ">= 1000/s", rate,
               rate / *first_rate, "grows with N (ray #64231)");
    fmt::print("{:<44} {:>12} {:>9.1f} MB {:>8} {}\n", fmt::format("  controller peak RSS"),
               "< 100 MB", o.peak_rss_mb, "", "");
    std::fflush(stdout);
  }
}

// Short trials on 2 slots: how much longer than the trials' own time.
void short_trials(Bench& bench) {
  const int64_t n = bench.options().quick ? 100 : 500;
  const double length_s = 0.1;
  const double ideal = static_cast<double>(n) * length_s / 2;
  for (bool reuse : {false, true}) {
    const std::string body = fmt::format(
        "metric = \"accuracy\"\nmode = \"max\"\nnum_samples = {}\nmax_concurrent_trials = 2\n"
        "reuse_workers = {}\n[trainable]\nbuiltin = \"learning_curve\"\n"
        "[param_space]\niterations = 1\nsleep_s = {}\n[resources]\ncpus = 2\n",
        n, reuse, length_s);
    const Outcome o = bench.run(reuse ? "short_reused" : "short_fresh", body);
    fmt::print(
        "{:<44} {:>10.2f} s {:>10.2f} s {:>+7.1f}%  {}\n",
        fmt::format("{} x {} s trials on 2 slots, {}", n, length_s, reuse ? "reused" : "fresh"),
        ideal, o.wall_s, 100 * (o.wall_s / ideal - 1),
        fmt::format("{:+.0f}% (10k x 1 s)", 100 * kRayShortTrialOverhead));
    std::fflush(stdout);
  }
}

// Eight trials reporting as fast as they can, then at 600 results/s each.
void result_rates(Bench& bench) {
  const int64_t per_trial = bench.options().quick ? 5000 : 25000;
  const Outcome flat = bench.run("rate_flat", noop_sweep(8, per_trial, 8, false));
  fmt::print("{:<44} {:>12} {:>9.0f}/s {:>8} {:.0f}/s at <= 20% overhead\n",
             "8 trials reporting flat out: results/s", ">= 100000/s",
             static_cast<double>(flat.results) / flat.wall_s, "", kRayResultsPerSecond);
  const double rate = 600;
  const int64_t paced = bench.options().quick ? 1200 : 3000;
  const double ideal = static_cast<double>(paced) / rate;
  const Outcome o = bench.run("rate_paced", noop_sweep(8, paced, 8, false, rate));
  if (o.wall_s < 0.9 * ideal) {
    fmt::print("{:<44} {:>12}\n", "8 trials at 600 results/s each",
               "n/a: this build's noop has no results_per_s");
  } else {
    fmt::print("{:<44} {:>10.2f} s {:>10.2f} s {:>+7.1f}%  {}\n",
               "8 trials at 600 results/s each (4,800/s)", ideal, o.wall_s,
               100 * (o.wall_s / ideal - 1), "<= 20% at 4,800/s");
  }
  std::fflush(stdout);
}

// The median time of one durable checkpoint on this disk, with nothing else
// running: a one-file checkpoint written by a "rank", staged and published
// (storage/checkpoint_layout.h: the file, the staging directory and the
// trial directory fsynced, renames between), as a report's checkpoint is.
double durable_checkpoint_s(const fs::path& dir) {
  const fs::path trial_dir = dir / "durable_checkpoint";
  std::vector<double> seconds;
  for (int64_t i = 1; i <= 200; ++i) {
    const auto start = Clock::now();
    const fs::path scratch = tune::storage::scratch_dir(trial_dir, 0, i);
    fs::create_directories(scratch);
    std::ofstream(scratch / "state.json") << fmt::format("{{\"iteration\": {}}}", i);
    tune::storage::stage_checkpoint(scratch, tune::storage::staging_dir(trial_dir, i));
    tune::storage::publish_checkpoint(tune::storage::staging_dir(trial_dir, i),
                                      tune::storage::checkpoint_dir(trial_dir, i));
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  fs::remove_all(trial_dir);
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  return seconds[seconds.size() / 2];
}

// FIFO, HyperBand and PBT on the 64 learning curves of scheduler_efficiency:
// wall time per completed iteration against FIFO's. The pausing schedulers
// need a checkpoint wherever they may pause or clone a trial. They run
// twice: checkpointing every iteration, and only where
// train::should_checkpoint() says the scheduler may act (HyperBand's
// milestones, PBT's perturbation points), their reports in between leased.
// FIFO runs twice too: as scheduler_efficiency runs it (no checkpoints) and
// with a checkpoint every iteration, which leaves the cost of pausing,
// resuming and cloning alone in the ratio of the every-iteration rows.
//
// The floor under a pausing scheduler's ratio: its iterations at FIFO's
// cost each, plus its published checkpoints (pauses, PBT's clones) at one
// durable checkpoint's cost each, with nothing else of a pause counted.
void schedulers(Bench& bench, bool reuse) {
  const double iteration_ms = bench.options().iteration_ms;
  fmt::print("schedulers, reuse_workers = {}{}{}:\n", reuse,
             reuse ? " (Ray's default reuse_actors for function trainables)" : "",
             iteration_ms > 0 ? fmt::format(", {} ms per iteration", iteration_ms) : "");
  const std::string curves =
      fmt::format("reuse_workers = {}\n", reuse) +
      "metric = \"accuracy\"\nmode = \"max\"\nnum_samples = 64\nseed = 2024\n"
      "[trainable]\nbuiltin = \"learning_curve\"\n[resources]\ncpus = 2\n"
      "[param_space]\nceiling = { uniform = [0.6, 0.95] }\n"
      "speed = { loguniform = [0.02, 0.3] }\niterations = 81\n" +
      fmt::format("sleep_s = {}\n", iteration_ms / 1000);
  auto per_iteration = [](const Outcome& o) { return o.wall_s / static_cast<double>(o.results); };
  const double checkpoint_s = durable_checkpoint_s(bench.dir());
  const Outcome fifo = bench.run("sched_fifo", curves + "checkpoint_every = 0\n");
  const Outcome fifo_checkpointed = bench.run("sched_fifo_ckpt", curves + "checkpoint_every = 1\n");
  fmt::print("{:<44} {:>12} {:>8.3f} ms {:>8}\n", "FIFO: wall per iteration", "",
             1e3 * per_iteration(fifo), "1.00x");
  fmt::print("{:<44} {:>12} {:>8.3f} ms {:>7.2f}x\n", "FIFO, checkpoint every iteration", "",
             1e3 * per_iteration(fifo_checkpointed),
             per_iteration(fifo_checkpointed) / per_iteration(fifo));
  const std::vector<std::pair<std::string, std::string>> others = {
      {"HyperBand", "[scheduler]\ntype = \"hyperband\"\nmax_t = 81\nreduction_factor = 3\n"},
      {"PBT",
       "[scheduler]\ntype = \"pbt\"\ntime_attr = \"training_iteration\"\n"
       "perturbation_interval = 9\nseed = 2024\n"
       "hyperparam_mutations = { speed = { loguniform = [0.02, 0.3] } }\n"},
  };
  struct Checkpointing {
    std::string label, tag, param;
  };
  const std::vector<Checkpointing> checkpointing = {
      {"checkpoint every iteration", "every", "checkpoint_every = 1\n"},
      {"checkpoint where asked", "asked", "checkpoint_for_scheduler = true\n"},
  };
  for (const auto& [name, scheduler] : others) {
    for (const auto& [how, tag, param] : checkpointing) {
      const Outcome o =
          bench.run(fmt::format("sched_{}_{}", name, tag), curves + param + scheduler);
      fmt::print(
          "{:<44} {:>12} {:>8.3f} ms {:>7.2f}x FIFO's, {:.2f}x checkpointed FIFO's (goal <= "
          "1.3x; {:.2f}x FIFO's iterations)\n",
          fmt::format("{}, {}", name, how), "", 1e3 * per_iteration(o),
          per_iteration(o) / per_iteration(fifo),
          per_iteration(o) / per_iteration(fifo_checkpointed),
          static_cast<double>(o.results) / static_cast<double>(fifo.results));
      fmt::print("  its {} checkpoints alone, at {:.3f} ms each, make it at least {:.2f}x FIFO's\n",
                 o.checkpoints, 1e3 * checkpoint_s,
                 1 + static_cast<double>(o.checkpoints) * checkpoint_s /
                         (static_cast<double>(o.results) * per_iteration(fifo)));
      std::fflush(stdout);
    }
  }
}

std::vector<int64_t> parse_counts(const std::string& text) {
  std::vector<int64_t> counts;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) counts.push_back(std::stoll(item));
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--tunerun" && has_value) {
      options.tunerun = argv[++i];
    } else if (arg == "--trials" && has_value) {
      options.trial_counts = parse_counts(argv[++i]);
    } else if (arg == "--only" && has_value) {
      std::stringstream in(argv[++i]);
      for (std::string item; std::getline(in, item, ',');) options.only.insert(item);
    } else if (arg == "--iteration-ms" && has_value) {
      options.iteration_ms = std::stod(argv[++i]);
    } else if (arg == "--quick") {
      options.quick = true;
      options.trial_counts = {1000, 10000};
    } else {
      fmt::print(stderr,
                 "usage: overhead [--tunerun PATH] [--trials N,N,...] "
                 "[--only trials,slots,rate,schedulers] [--quick] [--iteration-ms MS]\n"
                 "unknown argument: {}\n",
                 arg);
      return 2;
    }
  }
  Bench bench(options);
  fmt::print("tunerun: {}\n", options.tunerun);
  print_header();
  if (bench.wants("trials")) trials_at_scale(bench);
  if (bench.wants("slots")) short_trials(bench);
  if (bench.wants("rate")) result_rates(bench);
  if (bench.wants("schedulers")) {
    schedulers(bench, false);
    schedulers(bench, true);
  }
  return 0;
}
