// ExperimentSpec: everything one sweep needs, whether it came from a TOML
// file (tune/spec/sweep_file.h), the C++ API or Python. Plain data; defaults follow
// Ray Tune where Ray has one. Each scalar field is a row of the spec table
// (tune/spec/fields.h), through which the sweep file, JSON and Python set it;
// a new field needs its row there. finish_spec (tune/spec/validation.h)
// applies the rules before anything runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"
#include "schedulers/trial_scheduler.h"
#include "search/param_space.h"
#include "search/searcher.h"
#include "tune/cluster.h"
#include "tune/resources.h"
#include "tune/stopper.h"

namespace tune {

// What a trial runs, and the resources of each of its ranks.
struct TrainableSpec : Resources {
  std::string name;     // a registered trainable (built-in or from a library)
  std::string library;  // shared library that registers it; empty: the worker executable
  // An external command instead of a registered function: argv with {key}
  // placeholders filled from the config (train/external_command.h).
  std::vector<std::string> command;
  std::filesystem::path working_dir;  // workers start here; empty: the controller's
};

// The simulated cluster of launcher "sim" ([simulation] in a sweep file):
// its nodes, how long an iteration takes, the faults it injects, the seed of
// every random draw. Rates of deaths and losses are per simulated hour; a
// late report's chance is per report.
struct SimulationSpec {
  int nodes = 4;
  int cpus_per_node = 8;
  int gpus_per_node = 0;
  // An iteration's mean duration where a trial's config sets no sleep_s; 0:
  // none, ranks report as fast as the controller answers.
  double iteration_s = 0;
  // Each duration is the mean times a factor drawn uniformly from
  // [1 - jitter, 1 + jitter].
  double iteration_jitter = 0;
  // What a simulated rank reports (tune/launch/sim/trial_curve.h): "learning_curve"
  // (the built-in's model from the config), "crossing" or "faithful" (the
  // families of train/builtins/curve_families.h), "table" (curve_table's rows).
  std::string curve = "learning_curve";
  // Tabulated curves, one CSV row per config and epoch (train/builtins/curve_table.h);
  // a sweep file's relative path is relative to the sweep file.
  std::filesystem::path curve_table;
  double rank_death_rate = 0;   // per rank and hour: it dies (SIGKILL), failing its trial
  double node_loss_rate = 0;    // per node and hour: every rank on it dies, no trial charged
  double node_recovery_s = 60;  // a lost node is back this long after; 0: never
  double late_report_rate = 0;  // per report: it comes late_report_s late (a straggler)
  double late_report_s = 5;
  uint64_t seed = 0;  // every draw of the simulation: the same seed, the same draws per rank
  // "real": ranks take their durations in real time; "virtual": the
  // controller's clock is the simulation's, which jumps from event to event
  // (tune/system/clock.h, tune/launch/lockstep.h): no waits, the same database each run.
  std::string time = "real";
  bool virtual_time() const { return time == "virtual"; }
  // Not a [simulation] key: the controller's [failure] heartbeat_timeout_s.
  // Virtual ranks do not beat; one silent this long (hang_at) is killed.
  double heartbeat_timeout_s = 30;
};

struct ExperimentSpec {
  std::string name;                             // names the directory and the trials
  std::filesystem::path storage_path = "runs";  // experiment dir is storage_path / name
  // The experiment dir is private (0700) unless its group may read it (0750).
  bool share_with_group = false;
  std::string metric;  // may be empty: no best trial then
  Mode mode = Mode::kMin;
  // Several objectives (metric = ["accuracy", "latency_ms"], mode = ["max",
  // "min"]): every metric and every mode in order, metric and mode above
  // being the first; empty with one objective. finish_spec pairs them (one
  // mode applies to every metric).
  std::vector<std::string> metrics;
  std::vector<Mode> modes;
  // Earlier experiments' directories (runs/NAME) a model-based searcher
  // starts from (tune/spec/warm_start.h); empty: none.
  std::vector<std::filesystem::path> warm_start;
  int64_t num_samples = 1;        // repeats of the grid; Ray's default
  int max_concurrent_trials = 0;  // 0: as many as the CPUs allow (Ray: None)
  uint64_t seed = 0;              // seeds the searcher: same seed, same configs
  double total_cpus = 0;          // 0: the machine's cores
  int total_gpus = -1;            // -1: the GPUs this machine lends (tune/system/gpus.h)
  // Ray's reuse_actors: a trial's ranks, once they said DONE, run the next
  // trial instead of exiting (function trainables without GPUs).
  bool reuse_workers = false;
  // Without reuse: start the next trial's fresh processes while trials run,
  // so that a trial's start waits for no process start (local launcher,
  // trainables without GPUs; one spare group at a time).
  bool prestart_workers = true;
  double heartbeat_timeout_s = 30;  // a rank silent this long fails its trial
  double heartbeat_period_s = 2;    // how often ranks beat
  int max_failures = 0;    // restarts of a failed trial from its checkpoint; -1: unlimited (Ray: 0)
  bool fail_fast = false;  // the first trial ERROR ends the experiment, restorably (Ray: false)
  int num_to_keep = 0;     // checkpoints kept per trial; 0: all (Ray: None)
  std::string checkpoint_score_attribute;    // rank kept checkpoints by this metric; "": recency
  Mode checkpoint_score_order = Mode::kMax;  // which scores are better (Ray: "max")

  ClusterSpec cluster;
  SimulationSpec simulation;
  TrainableSpec trainable;
  ParamSpace param_space;
  std::string search_algorithm = "random";
  Json search_options = Json::object();
  std::string scheduler = "fifo";
  Json scheduler_options = Json::object();
  // Plug-in objects from the C++ API; when set they replace the named ones.
  std::shared_ptr<search::Searcher> custom_searcher;
  std::shared_ptr<schedulers::TrialScheduler> custom_scheduler;
  std::vector<StopCriterion> stop;
  // Ray's strict metric checking: a result without the experiment's metric
  // (each objective's), or without a key `stop` names, ends its trial in
  // ERROR naming the key and what was reported. finish_spec turns it off
  // when TUNE_DISABLE_STRICT_METRIC_CHECKING=1 (Ray's switch).
  bool strict_metric_checking = true;
  // Stopper objects from the C++ API (tune/builtin_stoppers.h), asked after `stop`.
  std::vector<std::shared_ptr<Stopper>> stoppers;
  // Ray's trial_dirname_creator (C++ and Python APIs): a new trial's
  // directory name under trials/, from its id and config; unset: the id.
  std::function<std::string(const std::string& trial_id, const Json& config)> trial_dirname;

  Json source = Json::object();  // the sweep as the user wrote it, stored for display
  std::string sweep_text;        // the sweep file's text, for `tunerun resume`
  std::string sweep_file;        // its path, for messages

  std::filesystem::path experiment_dir() const { return storage_path / name; }
  // None, one (metric and mode) or several (metrics and modes, paired).
  std::vector<Objective> objectives() const {
    if (metrics.empty())
      return metric.empty() ? std::vector<Objective>() : std::vector{Objective{metric, mode}};
    std::vector<Objective> out;
    for (size_t i = 0; i < metrics.size(); ++i) {
      out.push_back({metrics[i], modes.size() == metrics.size() ? modes[i] : mode});
    }
    return out;
  }
};

}  // namespace tune
