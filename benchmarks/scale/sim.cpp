// benchmarks/scale: the real controller driving 1,000 trials x 4 ranks at
// once on simulated nodes (launcher "sim": every rank a simulated peer of
// one tunerun-sim process, over the real CURVE channel), in real time.
//
//   ASHA over 2,000 trials, 1,000 running at a time on 500 nodes x 8 CPUs:
//     decision latency (a REPORT's receipt to its DECISION's send, kept by
//     the controller: ExperimentSummary::decision_latency), the controller
//     process's peak RSS and CPU time, results/s, and the slowest first
//     report of a run (its start to its first result, less the iteration);
//   a tenth of the nodes lost at one moment (SimLauncher::lose_node, called
//     from a callback once every trial has reported a few iterations, FIFO):
//     the time from the loss to the last affected trial's requeue (PENDING
//     again, from the store's trial_events), no trial requeued that had no
//     rank on a lost node, and every trial's results all there, none twice.
//
// Each run is a forked child, which says its own peak RSS (VmHWM) and CPU
// time: the rusage wait4 gives includes the peers' process (tunerun-sim),
// a child the controller reaps, and so says the larger of the two peaks.
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "benchmarks/scale/figure.h"
#include "core/errors.h"
#include "train/builtins/builtins.h"
#include "tune/execution/controller.h"
#include "tune/execution/trial.h"
#include "tune/launch/sim/launcher.h"
#include "tune/spec/sweep_file.h"

namespace scale {
namespace {

struct Size {
  int trials;  // running at once
  int nodes;   // of 8 CPUs: two trials of 4 ranks each
  double iteration_s;
};

Size size_of(const Options& options) {
  Size size = options.quick ? Size{40, 20, 0.05} : Size{1000, 500, 1.0};
  if (options.sim_trials > 0) {
    size.trials = options.sim_trials;
    size.nodes = (size.trials + 1) / 2;
  }
  return size;
}

// What the child measured: its own peak RSS and CPU time, and the CPU time
// of the processes it reaped (the peers').
struct ChildRun {
  tune::Json out;
  double peak_rss_mb = 0;
  double cpu_s = 0;
  double children_cpu_s = 0;
};

double cpu_seconds(const rusage& usage) {
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

// This process's peak resident set (VmHWM), in MB; 0 when unreadable.
double own_peak_rss_mb() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
  }
  std::fclose(status);
  return kb / 1024;
}

// Runs `body` in a child process; its JSON comes back through a pipe, what
// the controller logs goes to `log`.
ChildRun in_child(const std::filesystem::path& log, const std::function<tune::Json()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw tune::Error("pipe failed");
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::filesystem::create_directories(log.parent_path());
    if (std::freopen(log.c_str(), "w", stderr) == nullptr) _exit(1);
    std::string text;
    try {
      tune::Json out = body();
      rusage self{}, children{};
      getrusage(RUSAGE_SELF, &self);
      getrusage(RUSAGE_CHILDREN, &children);
      out["peak_rss_mb"] = own_peak_rss_mb();
      out["cpu_s"] = cpu_seconds(self);
      out["children_cpu_s"] = cpu_seconds(children);
      text = out.dump();
    } catch (const std::exception& e) {
      text = tune::Json{{"error", e.what()}}.dump();
    }
    for (size_t at = 0; at < text.size();) {
      const ssize_t n = write(fds[1], text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    std::fflush(stderr);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ChildRun run;
  run.out = text.empty() ? tune::Json{{"error", "the child died"}} : tune::Json::parse(text);
  if (!run.out.contains("error")) {
    run.peak_rss_mb = run.out["peak_rss_mb"];
    run.cpu_s = run.out["cpu_s"];
    run.children_cpu_s = run.out["children_cpu_s"];
  }
  return run;
}

// One number from the experiment's database.
double query(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  double value = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    value = sqlite3_column_double(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

// The sweep of `size.trials` x 4 learning curves on the simulated nodes.
// `curve`: more rows of [param_space]; `scheduler`: a [scheduler] table or nothing.
tune::ExperimentSpec sweep(const Size& size, const Options& options, const std::string& name,
                           int samples, const std::string& curve, const std::string& scheduler) {
  train::register_builtin_trainables();
  tune::ExperimentSpec spec =
      tune::parse_sweep(fmt::format(R"(name = "{}"
metric = "accuracy"
mode = "max"
num_samples = {}
seed = 1

[trainable]
builtin = "learning_curve"
num_workers = 4

[param_space]
ceiling = {{ uniform = [0.6, 0.95] }}
speed = {{ loguniform = [0.05, 0.5] }}
{}

[cluster]
launcher = "sim"

[simulation]
nodes = {}
cpus_per_node = 8
iteration_s = {}
iteration_jitter = 0.2
node_recovery_s = {}
seed = 1
{}
)",
                                    name, samples, curve, size.nodes, size.iteration_s,
                                    5 * size.iteration_s, scheduler),
                        name + ".toml");
  spec.storage_path = options.dir / "sim";
  return spec;
}

tune::Json summary_json(const tune::ExperimentSummary& s) {
  return {{"trials", s.num_trials},
          {"terminated", s.num_terminated},
          {"results", s.num_results},
          {"wall_s", s.wall_s},
          {"decisions", s.decision_latency.count},
          {"p50_ms", s.decision_latency.p50_ms},
          {"p99_ms", s.decision_latency.p99_ms},
          {"max_ms", s.decision_latency.max_ms}};
}

std::vector<Figure> asha_figures(const Options& options) {
  const Size size = size_of(options);
  const ChildRun run = in_child(options.dir / "sim" / "asha.log", [&] {
    tune::ExperimentSpec spec = sweep(size, options, "asha", 2 * size.trials, "iterations = 27", R"(
[scheduler]
type = "asha"
max_t = 27
grace_period = 1
reduction_factor = 3
)");
    tune::TrialController controller(spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0});
    tune::Json out = summary_json(controller.run());
    // The slowest first report of a run: its start to its first result,
    // less the iteration itself (the first run of each trial).
    out["first_report_s"] =
        query(spec.experiment_dir() / "experiment.db",
              "SELECT max(first - started_at) FROM (SELECT t.started_at, min(r.timestamp) AS "
              "first FROM trials t JOIN results r USING (trial_id) GROUP BY t.trial_id)") -
        size.iteration_s;
    return out;
  });
  const tune::Json& o = run.out;
  if (o.contains("error")) {
    return {{"sim ASHA: the run failed", o["error"].get<std::string>(), "", false}};
  }
  const std::string what = fmt::format("sim ASHA, {} trials x 4 ranks at once", size.trials);
  const double p50 = o["p50_ms"], p99 = o["p99_ms"];
  return {
      {what + ": trials TERMINATED, results, wall",
       fmt::format("{}/{}, {}, {:.1f} s", o["terminated"].get<int64_t>(),
                   o["trials"].get<int64_t>(), thousands(o["results"]), o["wall_s"].get<double>()),
       "", std::nullopt},
      {what + ": decision latency p50 / p99 (max)",
       fmt::format("{:.2f} / {:.2f} ({:.1f}) ms of {}", p50, p99, o["max_ms"].get<double>(),
                   thousands(o["decisions"])),
       "<= 2 / 20 ms", options.quick ? std::nullopt : std::optional(p50 <= 2 && p99 <= 20)},
      {what + ": controller peak RSS", fmt::format("{:.0f} MB", run.peak_rss_mb), "< 300 MB",
       options.quick ? std::nullopt : std::optional(run.peak_rss_mb < 300)},
      {what + ": controller CPU time (the peers' process), results/s",
       fmt::format("{:.1f} s ({:.1f} s), {}/s", run.cpu_s, run.children_cpu_s,
                   thousands(o["results"].get<double>() / o["wall_s"].get<double>())),
       "", std::nullopt},
      {what + ": slowest first report after a start",
       fmt::format("{:.2f} s", o["first_report_s"].get<double>()), "", std::nullopt},
  };
}

// Loses every tenth node once `after` results came in, and says when.
class LoseNodes final : public tune::Callback {
 public:
  LoseNodes(std::shared_ptr<tune::SimLauncher> launcher, int nodes, int64_t after)
      : launcher_(std::move(launcher)), nodes_(nodes), after_(after) {}
  void on_trial_result(const std::string&, const tune::Json&, const tune::Json&) override {
    if (++results_ != after_) return;
    lost_at_ = tune::unix_now();
    for (int node = 0; node < nodes_; node += 10) launcher_->lose_node(node);
  }
  double lost_at() const { return lost_at_; }

 private:
  std::shared_ptr<tune::SimLauncher> launcher_;
  int nodes_;
  int64_t after_;
  int64_t results_ = 0;
  double lost_at_ = 0;
};

std::vector<Figure> lost_figures(const Options& options) {
  const Size size = size_of(options);
  constexpr int kIterations = 20;
  const ChildRun run = in_child(options.dir / "sim" / "lost.log", [&] {
    tune::ExperimentSpec spec =
        sweep(size, options, "lost", size.trials,
              fmt::format("iterations = {}\ncheckpoint_every = 5", kIterations), "");
    auto launcher = std::make_shared<tune::SimLauncher>(
        spec.simulation, tune::find_sim_peers_executable(TUNERUN_BINARY));
    auto lose = std::make_shared<LoseNodes>(launcher, size.nodes, int64_t{size.trials} * 6);
    tune::TrialController controller(spec,
                                     {.launcher = launcher, .verbosity = 0, .callbacks = {lose}});
    tune::Json out = summary_json(controller.run());
    const auto db = spec.experiment_dir() / "experiment.db";
    std::string lost_hosts;
    for (int node = 0; node < size.nodes; node += 10) {
      lost_hosts += fmt::format("{}('sim-n{}')", lost_hosts.empty() ? "" : ",", node + 1);
    }
    const double at = lose->lost_at();
    out["lost_nodes"] = (size.nodes + 9) / 10;
    // The trials on the lost nodes: those whose ranks there said HELLO
    // before the loss (placements), and those whose ranks there were still
    // connecting, known only by the requeue's reason, which names the node
    // the launcher lost. A requeue naming none of them is a trial requeued
    // that was not on a lost node.
    const std::string with = fmt::format(
        "WITH lost(host) AS (VALUES {0}), "
        "seen AS (SELECT DISTINCT trial_id FROM placements WHERE host IN (SELECT host FROM lost) "
        "AND at < {1:.6f}), "
        "requeued AS (SELECT trial_id, max(EXISTS (SELECT 1 FROM lost WHERE reason LIKE "
        "'%node ' || host || ' lost%')) AS for_loss FROM trial_events WHERE at >= {1:.6f} AND "
        "from_status = 'RUNNING' AND to_status = 'PENDING' GROUP BY trial_id) ",
        lost_hosts, at);
    out["affected"] = query(db, with +
                                    "SELECT count(*) FROM (SELECT trial_id FROM seen UNION "
                                    "SELECT trial_id FROM requeued WHERE for_loss)");
    out["connecting"] = query(db, with +
                                      "SELECT count(*) FROM requeued WHERE for_loss AND "
                                      "trial_id NOT IN (SELECT trial_id FROM seen)");
    out["requeued"] = query(db, with + "SELECT count(*) FROM requeued");
    out["stray"] = query(db, with + "SELECT count(*) FROM requeued WHERE NOT for_loss");
    out["requeue_s"] = query(db, fmt::format("SELECT max(first) - {:.6f} FROM (SELECT "
                                             "min(at) AS first FROM trial_events WHERE at >= "
                                             "{:.6f} AND from_status = 'RUNNING' AND to_status = "
                                             "'PENDING' GROUP BY trial_id)",
                                             at, at));
    const double distinct = query(db,
                                  "SELECT count(*) FROM (SELECT DISTINCT trial_id, "
                                  "training_iteration FROM results)");
    out["missing"] = int64_t{size.trials} * kIterations - distinct;
    const double rows = query(db, "SELECT count(*) FROM results");
    out["duplicates"] = rows - distinct;
    // Iterations after the last checkpoint, computed again by the restarted runs
    // (the store keeps the first of each).
    out["again"] = out["results"].get<double>() - rows;
    return out;
  });
  const tune::Json& o = run.out;
  if (o.contains("error")) {
    return {{"sim node loss: the run failed", o["error"].get<std::string>(), "", false}};
  }
  const double requeue_s = o["requeue_s"];
  const double missing = o["missing"], duplicates = o["duplicates"];
  const std::string what = fmt::format("sim, {} of {} nodes lost at once under {} trials x 4",
                                       o["lost_nodes"].get<int>(), size.nodes, size.trials);
  const double stray = o["stray"];
  return {
      {what + ": affected trials requeued (connecting at the loss), others, last after",
       fmt::format("{:.0f} of {:.0f} ({:.0f}), {:.0f}, {:.3f} s",
                   o["requeued"].get<double>() - stray, o["affected"].get<double>(),
                   o["connecting"].get<double>(), stray, requeue_s),
       "all, none, within 1 s",
       o["requeued"] == o["affected"] && stray == 0 && requeue_s >= 0 && requeue_s <= 1},
      {what + ": trials TERMINATED, results lost, duplicated (run again)",
       fmt::format("{}/{}, {:.0f}, {:.0f} ({:.0f})", o["terminated"].get<int64_t>(),
                   o["trials"].get<int64_t>(), missing, duplicates, o["again"].get<double>()),
       "all, 0, 0", o["terminated"] == o["trials"] && missing == 0 && duplicates == 0},
  };
}

}  // namespace

std::vector<Figure> sim_figures(const Options& options) {
  std::vector<Figure> figures = asha_figures(options);
  for (auto& f : lost_figures(options)) figures.push_back(std::move(f));
  return figures;
}

}  // namespace scale
