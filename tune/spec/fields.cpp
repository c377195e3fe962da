#include "tune/spec/fields.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/errors.h"

namespace tune {
namespace {

// An integer member from a JSON integer. A negative seed wraps to a large
// one; an int takes the value clamped to its range, which stays outside
// every valid range, so that the field's rule still refuses it.
template <class Int>
Int as_integer(const Json& j) {
  if constexpr (std::is_same_v<Int, uint64_t>) {
    return j.is_number_unsigned() ? j.get<uint64_t>() : static_cast<uint64_t>(j.get<int64_t>());
  } else {
    const int64_t v =
        j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX ? INT64_MAX : j.get<int64_t>();
    return static_cast<Int>(
        std::clamp<int64_t>(v, std::numeric_limits<Int>::min(), std::numeric_limits<Int>::max()));
  }
}

// One type of member: its name in docs, and its JSON form both ways.
template <class T>
struct FieldKind {
  static constexpr std::string_view kName = std::is_same_v<T, bool>     ? "bool"
                                            : std::is_same_v<T, double> ? "number"
                                            : std::is_integral_v<T>     ? "integer"
                                            : std::is_same_v<T, Mode>   ? "min|max"
                                            : std::is_same_v<T, PlacementStrategy>
                                                ? "PACK|SPREAD|STRICT_PACK|STRICT_SPREAD"
                                            : std::is_same_v<T, std::filesystem::path> ? "path"
                                                                                       : "string";

  static Json get(const T& v) {
    if constexpr (std::is_same_v<T, Mode> || std::is_same_v<T, PlacementStrategy>) {
      return std::string(to_string(v));
    } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
      return v.string();
    } else {
      return v;
    }
  }

  // Stores `j`; returns what was expected when it is of another type.
  static std::optional<std::string> set(const Json& j, T& out) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean()) return "expected true or false";
      out = j.get<bool>();
    } else if constexpr (std::is_same_v<T, double>) {
      if (!j.is_number()) return "expected a number";
      out = j.get<double>();
    } else if constexpr (std::is_integral_v<T>) {
      if (!j.is_number_integer()) return "expected an integer";
      out = as_integer<T>(j);
    } else {
      if (!j.is_string()) return "expected a string";
      if constexpr (std::is_same_v<T, Mode>) {
        const auto mode = mode_from_string(j.get<std::string>());
        if (!mode) return fmt::format("'{}' is not a mode; use min or max", j.get<std::string>());
        out = *mode;
      } else if constexpr (std::is_same_v<T, PlacementStrategy>) {
        const auto strategy = placement_strategy_from_string(j.get<std::string>());
        if (!strategy) {
          return fmt::format(
              "'{}' is not a placement strategy; use PACK, SPREAD, STRICT_PACK or STRICT_SPREAD",
              j.get<std::string>());
        }
        out = *strategy;
      } else {
        out = j.get<std::string>();
      }
    }
    return std::nullopt;
  }
};

// member_at<&ExperimentSpec::trainable, &Resources::num_workers>(spec) is
// spec.trainable.num_workers.
template <auto Member, auto... Rest, class Object>
constexpr auto& member_at(Object& object) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*Member;
  } else {
    return member_at<Rest...>(object.*Member);
  }
}

template <auto... Path>
using MemberType =
    std::remove_cvref_t<decltype(member_at<Path...>(std::declval<ExperimentSpec&>()))>;

// Where a row's field lives: the path of members from ExperimentSpec to it.
template <auto... Path>
constexpr SpecField::Access field_at = {
    .type = FieldKind<MemberType<Path...>>::kName,
    .get = [](const ExperimentSpec& spec) -> Json {
      return FieldKind<MemberType<Path...>>::get(member_at<Path...>(spec));
    },
    .set =
        [](ExperimentSpec& spec, const Json& value) {
          return FieldKind<MemberType<Path...>>::set(value, member_at<Path...>(spec));
        },
};

// trainable.num_workers: a count, or [min, max] for an elastic group
// (Resources::min_workers).
constexpr SpecField::Access kNumWorkers = {
    .type = "integer or [min, max]",
    .get = [](const ExperimentSpec& spec) -> Json {
      const Resources& r = spec.trainable;
      return r.min_workers > 0 ? Json::array({r.min_workers, r.num_workers}) : Json(r.num_workers);
    },
    .set = [](ExperimentSpec& spec, const Json& value) -> std::optional<std::string> {
      Resources& r = spec.trainable;
      if (value.is_number_integer()) {
        r.num_workers = as_integer<int>(value);
        r.min_workers = 0;
        return std::nullopt;
      }
      if (value.is_array() && value.size() == 2 && value[0].is_number_integer() &&
          value[1].is_number_integer()) {
        // min_workers 0 would read back as a plain count, unchecked.
        if (value[0] < 1) return "[min, max] needs 1 <= min <= max <= 1024";
        r.min_workers = as_integer<int>(value[0]);
        r.num_workers = as_integer<int>(value[1]);
        return std::nullopt;
      }
      return "expected an integer, or [min, max] for an elastic group";
    },
};

bool valid_num_workers(const Json& value) {
  if (value.is_array()) return 1 <= value[0] && value[0] <= value[1] && value[1] <= 1024;
  return value >= 1 && value <= 1024;
}

// The name is a folder's, and with "_00000" each trial's: 128 characters
// keep them, and the control channel's paths under them, within the limits
// of file systems (255 a name) and of socket paths. '=' as in Ray's
// names ("train-trial_id=...", which Ray Train's guides give nested runs).
constexpr size_t kMaxNameLength = 128;

bool valid_name(const Json& value) {
  const auto name = value.get<std::string>();
  if (name.empty() || name == "." || name == ".." || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '=';
  });
}

bool ipv4_or_empty(const Json& value) {
  const auto address = value.get<std::string>();
  in_addr parsed{};
  return address.empty() || inet_pton(AF_INET, address.c_str(), &parsed) == 1;
}

// metric and mode: one value, or a list of them for several objectives.
// A list of one is one value.
constexpr SpecField::Access kMetricAccess = {
    .type = "string|list",
    .get = [](const ExperimentSpec& spec) -> Json {
      return spec.metrics.size() > 1 ? Json(spec.metrics) : Json(spec.metric);
    },
    .set = [](ExperimentSpec& spec, const Json& value) -> std::optional<std::string> {
      const bool names =
          value.is_array() && !value.empty() &&
          std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); });
      if (!value.is_string() && !names) return "expected a metric name or a list of them";
      spec.metrics = value.is_string() ? std::vector<std::string>{value.get<std::string>()}
                                       : value.get<std::vector<std::string>>();
      spec.metric = spec.metrics.front();
      if (spec.metrics.size() == 1) spec.metrics.clear();
      return std::nullopt;
    },
};

constexpr SpecField::Access kModeAccess = {
    .type = "min|max|list",
    .get = [](const ExperimentSpec& spec) -> Json {
      if (spec.modes.size() <= 1) return std::string(to_string(spec.mode));
      Json out = Json::array();
      for (Mode m : spec.modes) out.push_back(std::string(to_string(m)));
      return out;
    },
    .set = [](ExperimentSpec& spec, const Json& value) -> std::optional<std::string> {
      const Json list = value.is_array() ? value : Json::array({value});
      std::vector<Mode> modes;
      for (const Json& v : list) {
        if (!v.is_string()) return "expected \"min\" or \"max\", or a list of them";
        const auto mode = mode_from_string(v.get<std::string>());
        if (!mode) return fmt::format("'{}' is not a mode; use min or max", v.get<std::string>());
        modes.push_back(*mode);
      }
      if (modes.empty()) return "expected \"min\" or \"max\", or a list of them";
      spec.mode = modes.front();
      spec.modes = modes.size() > 1 ? modes : std::vector<Mode>();
      return std::nullopt;
    },
};

constexpr SpecField::Access kWarmStartAccess = {
    .type = "path|list",
    .get = [](const ExperimentSpec& spec) -> Json {
      Json out = Json::array();
      for (const auto& dir : spec.warm_start) out.push_back(dir.string());
      return out;
    },
    .set = [](ExperimentSpec& spec, const Json& value) -> std::optional<std::string> {
      const Json list = value.is_array() ? value : Json::array({value});
      std::vector<std::filesystem::path> dirs;
      for (const Json& v : list) {
        if (!v.is_string()) return "expected an experiment directory or a list of them";
        dirs.emplace_back(v.get<std::string>());
      }
      spec.warm_start = std::move(dirs);
      return std::nullopt;
    },
};

using ES = ExperimentSpec;

// The rules' messages are what a user reads after a sweep file's
// "FILE:LINE: key 'KEY': "; tests/data/bad_sweeps pins several.
const SpecField kFields[] = {
    {"name", field_at<&ES::name>,
     "names the experiment's directory (storage_path/name) and its trials; default: the sweep "
     "file's stem, in the APIs the trainable's name and the time",
     valid_name,
     "'{}' is not a valid experiment name (1 to 128 letters, digits, '_', '-', '.', '=')",
     "RunConfig.name", R"("demo")"},
    {"storage_path", field_at<&ES::storage_path>,
     "the folder that holds experiments, relative to the working directory", nullptr, "",
     "RunConfig.storage_path", R"("elsewhere")"},
    {"share_with_group", field_at<&ES::share_with_group>,
     "the experiment folder's group may read it (0750); else only its owner (0700)", nullptr, "",
     "", "true"},
    {"metric", kMetricAccess,
     "the result key searchers, schedulers and the best trial judge by; empty: none; a list "
     "names several objectives (searchers motpe, nsga2, gp, random; the store's pareto_front)",
     nullptr, "", "TuneConfig.metric", R"("accuracy")"},
    {"mode", kModeAccess,
     "whether a lower or a higher metric is better; with several objectives, one mode for all "
     "or a list, one per metric",
     nullptr, "", "TuneConfig.mode", R"("max")"},
    {"num_samples", field_at<&ES::num_samples>,
     "repeats of the grid (with a model-based searcher: trials in all); -1: until a stopper "
     "ends the experiment (Ray's num_samples)",
     [](const Json& v) { return v >= 1 || v == -1; },
     "must be at least 1 (or -1: until a stopper ends the experiment)", "TuneConfig.num_samples",
     "3"},
    {"warm_start", kWarmStartAccess,
     "earlier experiments (their directories) the searcher starts from: TPE, GP-BO and MOTPE "
     "learn from their trials and run their best few configs again first; parameters new "
     "since are drawn at random for those trials",
     nullptr, "", "TuneConfig.warm_start", R"(["runs/last_week"])"},
    {"max_concurrent_trials", field_at<&ES::max_concurrent_trials>,
     "at most this many trials at once; 0: as many as the resources allow",
     [](const Json& v) { return v >= 0; }, "must be >= 0 (0: no limit)",
     "TuneConfig.max_concurrent_trials", "2"},
    {"seed", field_at<&ES::seed>, "seeds the searcher: the same seed, the same configs", nullptr,
     "", "TuneConfig.seed", "7"},
    {"reuse_workers", field_at<&ES::reuse_workers>,
     "a finished trial's ranks run the next trial instead of exiting (Ray's reuse_actors; "
     "function trainables without GPUs)",
     nullptr, "", "TuneConfig.reuse_actors", "true"},
    {"prestart_workers", field_at<&ES::prestart_workers>,
     "without reuse, the next trial's processes start while trials run (local launcher, "
     "trainables without GPUs)",
     nullptr, "", "TuneConfig.prestart_workers", "false"},

    {"trainable.num_workers", kNumWorkers,
     "ranks per trial; [min, max]: an elastic group, as many ranks as fit, at least min, resized "
     "at checkpoints (a node lost shrinks it, capacity back grows it)",
     valid_num_workers, "must be between 1 and 1024, or [min, max] with 1 <= min <= max <= 1024",
     "", "2"},
    {"trainable.cpus_per_worker", field_at<&ES::trainable, &Resources::cpus_per_worker>,
     "CPUs each rank takes from resources.cpus (Ray's resources_per_worker)",
     [](const Json& v) { return v > 0; }, "must be > 0", "", "2.5"},
    {"trainable.gpus_per_worker", field_at<&ES::trainable, &Resources::gpus_per_worker>,
     "whole GPUs per rank, as its CUDA_VISIBLE_DEVICES",
     [](const Json& v) { return v >= 0 && v <= 64; }, "must be a whole number from 0 to 64", "",
     "1"},
    {"trainable.threads_per_worker", field_at<&ES::trainable, &Resources::threads_per_worker>,
     "each rank's OMP_NUM_THREADS; 0: its whole CPUs",
     [](const Json& v) { return v >= 0 && v <= 1024; },
     "must be between 1 and 1024 (or 0: one per CPU of the worker)", "", "3"},
    {"trainable.placement_strategy", field_at<&ES::trainable, &Resources::placement_strategy>,
     "how a trial's ranks map onto nodes, as Ray's placement groups: PACK (as few nodes as "
     "fit), SPREAD (as many), STRICT_PACK (one node, or wait), STRICT_SPREAD (a node per rank, "
     "or wait); a group a STRICT strategy can never place is refused",
     nullptr, "", "", R"("SPREAD")"},

    {"search.algorithm", field_at<&ES::search_algorithm>,
     "the searcher (search/factory.h); the other keys of [search] are its options", nullptr, "", "",
     R"("tpe")"},
    {"scheduler.type", field_at<&ES::scheduler>,
     "the trial scheduler (schedulers/factory.cpp); the other keys of [scheduler] are its "
     "options",
     nullptr, "", "", R"("asha")"},

    {"resources.cpus", field_at<&ES::total_cpus>,
     "CPUs the controller hands out to trials; 0: every core of the machine",
     [](const Json& v) { return v >= 0; }, "must be > 0 (or 0: every core)", "", "3"},
    {"resources.gpus", field_at<&ES::total_gpus>,
     "GPUs the controller hands out; -1: those the machine lends (tune/system/gpus.h)",
     [](const Json& v) { return v >= -1; }, "must be >= 0", "", "1"},

    {"failure.heartbeat_timeout_s", field_at<&ES::heartbeat_timeout_s>,
     "a rank silent this long fails its trial; ranks beat every min(2, this / 4) s",
     // Under a second, a busy machine's ranks miss beats; over a day, a
     // hung rank holds its resources as long.
     [](const Json& v) { return v >= 1 && v <= 86400; },
     "must be between 1 and 86400 s (a day), got {}", "", "10"},
    {"failure.max_failures", field_at<&ES::max_failures>,
     "restarts of a failed trial from its latest checkpoint; -1: unlimited (Ray: 0)",
     [](const Json& v) { return v >= -1; }, "must be >= 0, or -1 for unlimited",
     "RunConfig.failure_config.max_failures", "2"},
    {"failure.fail_fast", field_at<&ES::fail_fast>,
     "the first trial ERROR ends the experiment, restorably (Ray: false)", nullptr, "",
     "RunConfig.failure_config.fail_fast", "true"},

    {"checkpoint.num_to_keep", field_at<&ES::num_to_keep>,
     "checkpoints kept per trial; 0: all (Ray: None)", [](const Json& v) { return v >= 0; },
     "must be >= 1 (or 0: keep all)", "RunConfig.checkpoint_config.num_to_keep", "2"},
    {"checkpoint.checkpoint_score_attribute", field_at<&ES::checkpoint_score_attribute>,
     "the metric kept checkpoints are ranked by; empty: the most recent are kept", nullptr, "",
     "RunConfig.checkpoint_config.checkpoint_score_attribute", R"("accuracy")"},
    {"checkpoint.checkpoint_score_order", field_at<&ES::checkpoint_score_order>,
     "which checkpoint scores are better (Ray: \"max\")", nullptr, "",
     "RunConfig.checkpoint_config.checkpoint_score_order", R"("min")"},

    {"cluster.launcher", field_at<&ES::cluster, &ClusterSpec::launcher>,
     "where ranks run: local, slurm (job steps of the allocation), auto: slurm when "
     "SLURM_JOB_ID is set, sim: simulated ranks on the nodes of [simulation], ssh: the "
     "hosts of hostfile over OpenSSH; the CLI's --launcher overrides it",
     [](const Json& v) {
       return v == "local" || v == "slurm" || v == "auto" || v == "sim" || v == "ssh";
     },
     "'{}' is not a launcher; use \"local\", \"slurm\", \"auto\" (slurm inside an "
     "allocation), \"sim\" or \"ssh\"",
     "RunConfig.cluster.launcher", R"("slurm")"},
    {"cluster.control_address", field_at<&ES::cluster, &ClusterSpec::control_address>,
     "the IPv4 address ranks reach the controller at; empty: loopback, or control_interface's",
     ipv4_or_empty, "'{}' is not an IPv4 address (e.g. \"10.1.2.3\")",
     "RunConfig.cluster.control_address", R"("10.1.2.3")"},
    {"cluster.control_interface", field_at<&ES::cluster, &ClusterSpec::control_interface>,
     "or the network interface whose IPv4 address that is; empty: none", nullptr, "",
     "RunConfig.cluster.control_interface", R"("eth0")"},
    {"cluster.slurm_poll_s", field_at<&ES::cluster, &ClusterSpec::slurm_poll_s>,
     "launcher slurm: seconds between reads of Slurm's node states (sinfo) while trials wait "
     "or a node is suspected",
     [](const Json& v) { return v >= 1 && v <= 3600; }, "must be between 1 and 3600",
     "RunConfig.cluster.slurm_poll_s", "10"},
    {"cluster.hostfile", field_at<&ES::cluster, &ClusterSpec::hostfile>,
     "launcher ssh: the hosts ranks run on, one a line: HOST [slots=N] [cpus=N] [gpus=N] "
     "(DeepSpeed's form; Horovod's HOST:N too); relative to the sweep file (Python: to the "
     "working directory)",
     nullptr, "", "RunConfig.cluster.hostfile", R"("/etc/tunerun/hosts")"},
    {"cluster.ssh_config", field_at<&ES::cluster, &ClusterSpec::ssh_config>,
     "launcher ssh: an ssh_config file every ssh it runs reads (ssh -F); empty: ssh's own "
     "(~/.ssh/config)",
     nullptr, "", "RunConfig.cluster.ssh_config", R"("/etc/tunerun/ssh_config")"},
    {"cluster.ssh_retry_s", field_at<&ES::cluster, &ClusterSpec::ssh_retry_s>,
     "launcher ssh: seconds between tries to reach a host that was lost or never answered",
     [](const Json& v) { return v >= 1 && v <= 3600; }, "must be between 1 and 3600",
     "RunConfig.cluster.ssh_retry_s", "2"},
    {"cluster.ssh_retire_after", field_at<&ES::cluster, &ClusterSpec::ssh_retire_after>,
     "launcher ssh: a host lost this many times is not used again in the run (as a Slurm node "
     "failing twice); 0: a host that returns is always used again",
     [](const Json& v) { return v >= 0; }, "must be >= 0 (0: never)",
     "RunConfig.cluster.ssh_retire_after", "0"},
    {"cluster.node_wait_s", field_at<&ES::cluster, &ClusterSpec::node_wait_s>,
     "launcher slurm: seconds trials may wait while no node that is up and in the allocation "
     "can hold their group; then every trial pauses at a checkpoint and the run exits "
     "resumable (130)",
     [](const Json& v) { return v >= 1 && v <= 86400; }, "must be between 1 and 86400",
     "RunConfig.cluster.node_wait_s", "300"},
    {"cluster.end_margin_s", field_at<&ES::cluster, &ClusterSpec::end_margin_s>,
     "launcher slurm: seconds before the allocation's time limit at which every trial pauses "
     "at a checkpoint and the run exits resumable (130); 0: only on SIGTERM",
     [](const Json& v) { return v >= 0 && v <= 86400; }, "must be between 0 and 86400",
     "RunConfig.cluster.end_margin_s", "600"},

    {"simulation.nodes", field_at<&ES::simulation, &SimulationSpec::nodes>,
     "simulated nodes (launcher \"sim\")", [](const Json& v) { return v >= 1 && v <= 100000; },
     "must be between 1 and 100000", "", "16"},
    {"simulation.cpus_per_node", field_at<&ES::simulation, &SimulationSpec::cpus_per_node>,
     "CPUs of each simulated node", [](const Json& v) { return v >= 1 && v <= 100000; },
     "must be between 1 and 100000", "", "64"},
    {"simulation.gpus_per_node", field_at<&ES::simulation, &SimulationSpec::gpus_per_node>,
     "GPUs of each simulated node", [](const Json& v) { return v >= 0 && v <= 1024; },
     "must be between 0 and 1024", "", "8"},
    {"simulation.iteration_s", field_at<&ES::simulation, &SimulationSpec::iteration_s>,
     "seconds a simulated iteration takes, where a trial's config sets no sleep_s (which is "
     "its duration then); 0: none, ranks report as fast as the controller answers",
     [](const Json& v) { return v >= 0; }, "must be >= 0", "", "30.5"},
    {"simulation.iteration_jitter", field_at<&ES::simulation, &SimulationSpec::iteration_jitter>,
     "each iteration lasts its mean times a factor drawn from [1 - jitter, 1 + jitter]",
     [](const Json& v) { return v >= 0 && v < 1; }, "must be >= 0 and < 1", "", "0.25"},
    {"simulation.curve", field_at<&ES::simulation, &SimulationSpec::curve>,
     "what simulated ranks report: learning_curve (the built-in's model from each config), "
     "crossing or faithful (benchmarks/multi_fidelity's families, from each config's lr, "
     "momentum, layers and dropout), table (the rows of curve_table a config picks)",
     [](const Json& v) {
       return v == "learning_curve" || v == "crossing" || v == "faithful" || v == "table";
     },
     "'{}' is not a curve; use \"learning_curve\", \"crossing\", \"faithful\" or \"table\"", "",
     R"("crossing")"},
    {"simulation.curve_table", field_at<&ES::simulation, &SimulationSpec::curve_table>,
     "with curve = \"table\": a CSV file of tabulated curves, one row per config and epoch "
     "(relative to the sweep file)",
     nullptr, "", "", R"("/data/curves.csv")"},
    {"simulation.rank_death_rate", field_at<&ES::simulation, &SimulationSpec::rank_death_rate>,
     "deaths per simulated rank and hour (it is killed, failing its trial under max_failures)",
     [](const Json& v) { return v >= 0; }, "must be >= 0", "", "0.5"},
    {"simulation.node_loss_rate", field_at<&ES::simulation, &SimulationSpec::node_loss_rate>,
     "losses per simulated node and hour: its ranks die, their trials are not charged",
     [](const Json& v) { return v >= 0; }, "must be >= 0", "", "0.1"},
    {"simulation.node_recovery_s", field_at<&ES::simulation, &SimulationSpec::node_recovery_s>,
     "a lost node takes ranks again this long after; 0: never",
     [](const Json& v) { return v >= 0; }, "must be >= 0 (0: never)", "", "600.5"},
    {"simulation.late_report_rate", field_at<&ES::simulation, &SimulationSpec::late_report_rate>,
     "the chance that a report comes late_report_s late (a straggling iteration; its "
     "heartbeats go on)",
     [](const Json& v) { return v >= 0 && v <= 1; }, "must be between 0 and 1", "", "0.01"},
    {"simulation.late_report_s", field_at<&ES::simulation, &SimulationSpec::late_report_s>,
     "how late a late report comes, in seconds", [](const Json& v) { return v >= 0; },
     "must be >= 0", "", "20.5"},
    {"simulation.seed", field_at<&ES::simulation, &SimulationSpec::seed>,
     "seeds every draw of the simulation (durations, faults): per rank, the same seed gives "
     "the same draws",
     nullptr, "", "", "7"},
    {"simulation.time", field_at<&ES::simulation, &SimulationSpec::time>,
     "real: simulated durations pass in real time; virtual: the controller's clock is the "
     "simulation's, jumping from event to event (no waits; one seed, one database)",
     [](const Json& v) { return v == "real" || v == "virtual"; },
     "'{}' is not a time; use \"real\" or \"virtual\"", "", R"("virtual")"},
};

}  // namespace

std::string_view SpecField::section() const {
  const auto dot = key.find('.');
  return dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
}

std::string_view SpecField::name() const {
  const auto dot = key.find('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

std::span<const SpecField> spec_fields() { return kFields; }

std::vector<std::string_view> spec_sections() {
  std::vector<std::string_view> sections = {""};
  for (const SpecField& field : kFields) {
    if (std::find(sections.begin(), sections.end(), field.section()) == sections.end()) {
      sections.push_back(field.section());
    }
  }
  return sections;
}

Json field_value(const SpecField& field, const ExperimentSpec& spec) {
  return field.access.get(spec);
}

Json field_default(const SpecField& field) { return field.access.get(ExperimentSpec()); }

void set_field(const SpecField& field, ExperimentSpec& spec, const Json& value) {
  if (auto expected = field.access.set(spec, value)) {
    throw ConfigError::at_key(std::string(field.key), *expected);
  }
}

}  // namespace tune
