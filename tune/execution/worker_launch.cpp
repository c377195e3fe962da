#include "tune/execution/worker_launch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdlib>

#include "train/worker_env.h"

extern char** environ;

namespace tune {
namespace {

// Removes NAME=... from `env`: the controller sets it per rank instead.
void drop_variable(std::vector<std::string>& env, std::string_view name) {
  std::erase_if(env, [&](const std::string& var) {
    return var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=';
  });
}

}  // namespace

std::vector<std::string> inherited_environment(bool has_gpus, bool threads_per_worker) {
  static const std::vector<std::string_view> kOwn = {
      "TUNERUN_", "RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE="};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view var(*e);
    bool own = false;
    for (auto prefix : kOwn) own = own || var.starts_with(prefix);
    if (!own) env.emplace_back(var);
  }
  if (has_gpus) drop_variable(env, "CUDA_VISIBLE_DEVICES");
  if (threads_per_worker) drop_variable(env, "OMP_NUM_THREADS");
  return env;
}

namespace {

// The launch of a group of `n` of `spec`'s ranks that say HELLO as
// `attempt` of `trial_id`, rank r writing to log_files[r].
GroupLaunch group_launch(const WorkerLaunchContext& context, const ExperimentSpec& spec,
                         const std::string& trial_id, int attempt, int n, int master_port,
                         const std::vector<std::vector<std::string>>& gpus,
                         const std::vector<std::filesystem::path>& log_files) {
  // Each rank's own CURVE keys are the launcher's (tune/channel/rank_keys.h).
  GroupLaunch launch{.trial_id = trial_id,
                     .attempt = attempt,
                     .argv = context.argv,
                     .env = context.env,
                     .working_dir = spec.trainable.working_dir,
                     .resources = spec.trainable};
  launch.resources.num_workers = n;
  auto& env = launch.env;
  env.push_back(fmt::format("{}=1", train::kEnvWorker));
  env.push_back(fmt::format("{}={}", train::kEnvController, context.controller));
  env.push_back(fmt::format("{}={}", train::kEnvCurveServerKey, context.server_key));
  env.push_back(fmt::format("{}={}", train::kEnvTrialId, trial_id));
  env.push_back(fmt::format("{}={}", train::kEnvAttempt, attempt));
  env.push_back(fmt::format("{}={}", train::kEnvParentPid, getpid()));
  env.push_back(fmt::format("{}={}", train::kEnvHeartbeatS, spec.heartbeat_period_s));
  if (context.reuse) env.push_back(fmt::format("{}=1", train::kEnvReuse));
  env.push_back(fmt::format("WORLD_SIZE={}", n));
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back(fmt::format("MASTER_PORT={}", master_port));
  // An OMP_NUM_THREADS of the user's wins unless the spec names threads_per_worker.
  if (std::getenv("OMP_NUM_THREADS") == nullptr || spec.trainable.threads_per_worker > 0) {
    env.push_back(fmt::format("OMP_NUM_THREADS={}", spec.trainable.threads()));
  }
  for (int rank = 0; rank < n; ++rank) {
    RankLaunch r{{fmt::format("RANK={}", rank)}, log_files.at(rank)};
    // Ranks without GPUs get none visible when the machine has some.
    if (context.has_gpus) {
      r.env.push_back(fmt::format("CUDA_VISIBLE_DEVICES={}", fmt::join(gpus.at(rank), ",")));
    }
    launch.ranks.push_back(std::move(r));
  }
  return launch;
}

}  // namespace

GroupLaunch worker_launch(const WorkerLaunchContext& context, const ExperimentSpec& spec,
                          const Trial& trial, int master_port,
                          const std::vector<std::vector<std::string>>& gpus) {
  std::vector<std::filesystem::path> logs;
  for (int rank = 0; rank < trial.world_size; ++rank) {
    logs.push_back(trial.dir / fmt::format("rank_{}.log", rank));
  }
  return group_launch(context, spec, trial.id, trial.attempt, trial.world_size, master_port, gpus,
                      logs);
}

GroupLaunch spare_launch(const WorkerLaunchContext& context, const ExperimentSpec& spec,
                         int serial) {
  const auto n = static_cast<size_t>(spec.trainable.num_workers);
  // No GPUs: spares are started only for trainables that take none.
  return group_launch(context, spec, train::kSpareTrialId, serial, spec.trainable.num_workers, 0,
                      std::vector<std::vector<std::string>>(n),
                      std::vector<std::filesystem::path>(n, "/dev/null"));
}

}  // namespace tune
