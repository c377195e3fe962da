// The parts of the controller that grow with the size of a sweep, measured
// at 1,000 concurrent trials x 4 ranks and a 100,000-trial database, each
// figure printed beside its goal. The sim section runs the whole controller
// on simulated ranks; the others drive the real code (ExperimentStore, the
// dashboard's Api, the progress table, the peer book, the control channel,
// WorkerGroups) as the controller drives it, with no processes.
//
//   build/benchmarks/scale [--quick] [--only sim,store,dashboard,progress,peers,files]
//                          [--dir DIR] [--keep] [--sim-trials N]
//
// --quick: small sizes (seconds; CTest runs it so it keeps working; its
// figures are not the goals'). --keep leaves DIR (default: a folder under
// the temporary directory) with the 100,000-trial experiment in DIR/runs,
// for `tunerun dashboard DIR/runs`; `--only dashboard --dir DIR` then
// measures the dashboard on it again without writing it anew.
// Sections: sim (the real controller on 1,000 x 4 simulated ranks:
// decision latency, RSS, a tenth of the nodes lost; forked first), store
// (results/s, cost per trial first tenth against last), dashboard (each
// answer on that experiment), progress (the table's frame), peers (per-peer
// maps and the loop's per-turn work), files (the open-file limit the
// controller raises). --sim-trials N: the sim section runs N trials at once
// (on N / 2 nodes) instead of 1,000.
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "benchmarks/scale/figure.h"
#include "storage/experiment_store.h"
#include "tune/system/file_limit.h"

namespace {

std::vector<scale::Figure> file_figures() {
  const tune::FileLimit before = tune::current_file_limit();
  const tune::FileLimit after = tune::raise_file_limit();
  const int64_t needed = tune::descriptors_needed(1000 * 4);
  return {{"open files: soft limit, raised to the hard one at the controller's start",
           fmt::format("{} -> {} (hard {})", before.soft, after.soft, after.hard),
           fmt::format(">= {} for 4,000 ranks", needed), after.soft >= needed}};
}

void print(const std::vector<scale::Figure>& figures) {
  for (const auto& f : figures) {
    const char* verdict = !f.met ? "" : *f.met ? "met" : "MISSED";
    fmt::print("{:<88} {:>30}  {:<26} {}\n", f.what, f.measured, f.goal, verdict);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  scale::Options options;
  options.dir = std::filesystem::temp_directory_path() / fmt::format("tunerun_scale_{}", getpid());
  std::set<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--keep") {
      options.keep = true;
    } else if (arg == "--sim-trials" && i + 1 < argc) {
      options.sim_trials = std::stoi(argv[++i]);
    } else if (arg == "--dir" && i + 1 < argc) {
      options.dir = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t pos = 0; pos <= list.size();) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        only.insert(list.substr(pos, comma - pos));
        pos = comma + 1;
      }
    } else {
      fmt::print(stderr,
                 "usage: scale [--quick] [--only sim,store,dashboard,progress,peers,files] "
                 "[--dir DIR] [--keep] [--sim-trials N]\n");
      return 2;
    }
  }
  auto wanted = [&](const char* section) { return only.empty() || only.contains(section); };
  // --only dashboard on a --dir that holds the experiment already: read it as it is.
  scale::WrittenExperiment written{options.dir / "runs", "scale"};
  const bool reuse = !wanted("store") && wanted("dashboard") &&
                     std::filesystem::exists(written.runs / written.name / "experiment.db");
  if (!reuse) std::filesystem::remove_all(options.dir);
  std::filesystem::create_directories(options.dir);
  fmt::print("tunerun at scale{}: {}\n\n", options.quick ? " (--quick: small sizes)" : "",
             options.dir.string());
  fmt::print("{:<88} {:>30}  {:<26} {}\n", "figure", "measured", "goal", "");
  if (wanted("sim")) print(scale::sim_figures(options));
  if (wanted("files")) print(file_figures());
  if (wanted("peers")) print(scale::peer_figures(options));
  if (wanted("progress")) print(scale::progress_figures(options));
  if (reuse) {
    // Opened for writing once, as a resumed controller would: the schema
    // adds what this build has and the file lacks.
    auto store = tune::storage::ExperimentStore::open(written.runs / written.name);
    written.trials = static_cast<int64_t>(store.trials().size());
    written.results = store.num_results();
  } else if (wanted("store") || wanted("dashboard")) {
    print(scale::store_figures(options, written));
  }
  if (wanted("dashboard")) print(scale::dashboard_figures(options, written));
  if (!options.keep) std::filesystem::remove_all(options.dir);
  return 0;
}
