// Fault-injection soak: a sweep of 20 checkpointing trials while random
// workers and the controller itself are killed with SIGKILL; the controller
// is resumed after each of its deaths. Prints one summary line: trials
// completed, results lost and duplicated (both must be 0), and the time from
// each worker kill to the controller's restart of that trial.
//
//   build/benchmarks/fault_soak [kills=12] [seed=1]
//
// Not a test (it takes about a minute); run it after changes to the
// controller, the store or the worker runtime.

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "storage/experiment_store.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kTrials = 20;
constexpr int kIterations = 30;

const char* kSweep = R"(
name = "soak"
metric = "accuracy"
mode = "max"
num_samples = 20
seed = 9
[trainable]
builtin = "learning_curve"
num_workers = 2
[param_space]
iterations = 30
checkpoint_every = 3
sleep_s = 0.01
speed = { loguniform = [0.02, 0.3] }
[failure]
max_failures = -1
)";

pid_t start(const std::vector<std::string>& args, const fs::path& cwd) {
  std::vector<std::string> argv{TUNERUN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  const std::string log = (cwd / "controller.log").string();
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Worker pids of `controller` with their trial ids (from their environment).
std::vector<std::pair<pid_t, std::string>> workers_of(pid_t controller) {
  std::vector<std::pair<pid_t, std::string>> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (!std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, comm, state;
    long ppid = 0;
    if (!(stat >> pid >> comm >> state >> ppid) || ppid != controller) continue;
    std::ifstream env_file(entry.path() / "environ");
    std::string var;
    while (std::getline(env_file, var, '\0')) {
      if (var.starts_with("TUNERUN_TRIAL_ID=")) out.emplace_back(std::stoi(name), var.substr(17));
    }
  }
  return out;
}

std::map<std::string, int64_t> failures(const fs::path& dir) {
  std::map<std::string, int64_t> out;
  try {
    for (const auto& t : tune::storage::ExperimentStore::open_read_only(dir).trials()) {
      out[t.trial_id] = t.num_failures;
    }
  } catch (const std::exception&) {
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int kills = argc > 1 ? std::stoi(argv[1]) : 12;
  std::mt19937 rng(argc > 2 ? std::stoi(argv[2]) : 1);
  const fs::path root = fs::temp_directory_path() / "tunerun_soak";
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "soak.toml") << kSweep;
  const fs::path dir = root / "runs/soak";

  int worker_kills = 0, controller_kills = 0, restarts = 0;
  std::vector<double> detect_ms;
  pid_t controller = start({"-q", "soak.toml"}, root);
  while (worker_kills + controller_kills < kills) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 900));
    int status = 0;
    if (waitpid(controller, &status, WNOHANG) == controller) break;  // finished early
    if (rng() % 4 == 0) {
      kill(controller, SIGKILL);
      waitpid(controller, nullptr, 0);
      ++controller_kills;
      controller = start({"resume", "-q", "runs/soak"}, root);
      ++restarts;
      continue;
    }
    auto workers = workers_of(controller);
    if (workers.empty()) continue;
    const auto [pid, trial] = workers[rng() % workers.size()];
    const int64_t before = failures(dir)[trial];
    const auto killed_at = Clock::now();
    kill(pid, SIGKILL);
    ++worker_kills;
    while (failures(dir)[trial] == before && Clock::now() - killed_at < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    detect_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - killed_at).count());
  }
  int status = 0;
  waitpid(controller, &status, 0);
  // A run that ended by a controller kill in the last moments: finish it.
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    waitpid(start({"resume", "-q", "runs/soak"}, root), &status, 0);
  }

  auto store = tune::storage::ExperimentStore::open_read_only(dir);
  int completed = 0;
  int64_t lost = 0, duplicates = 0, gaps = 0;
  for (const auto& t : store.trials()) {
    completed += t.status == tune::TrialStatus::kTerminated;
    auto results = store.results(t.trial_id);
    lost += std::max<int64_t>(0, kIterations - static_cast<int64_t>(results.size()));
    for (size_t i = 0; i < results.size(); ++i) {
      gaps += results[i].training_iteration != static_cast<int64_t>(i) + 1;
      duplicates += i > 0 && results[i].training_iteration == results[i - 1].training_iteration;
    }
  }
  std::sort(detect_ms.begin(), detect_ms.end());
  const double median = detect_ms.empty() ? 0 : detect_ms[detect_ms.size() / 2];
  const double worst = detect_ms.empty() ? 0 : detect_ms.back();
  fmt::print(
      "soak: {}/{} trials completed, {} kills ({} workers, {} controller; {} resumes), "
      "results lost {}, duplicates {}, out-of-order {}, worker kill -> restart "
      "median {:.0f} ms, max {:.0f} ms\n",
      completed, kTrials, worker_kills + controller_kills, worker_kills, controller_kills, restarts,
      lost, duplicates, gaps, median, worst);
  fs::remove_all(root);
  return completed == kTrials && lost == 0 && duplicates == 0 && gaps == 0 ? 0 : 1;
}
