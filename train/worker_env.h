// The environment a controller gives each worker process it starts. The
// controller writes these variables; the worker runtime reads them. Also set,
// as torchrun does: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "train/channel_keys.h"

namespace train {

inline constexpr const char* kEnvWorker = "TUNERUN_WORKER";          // "1" in a worker
inline constexpr const char* kEnvController = "TUNERUN_CONTROLLER";  // ZeroMQ endpoint
inline constexpr const char* kEnvTrialId = "TUNERUN_TRIAL_ID";
inline constexpr const char* kEnvAttempt = "TUNERUN_ATTEMPT";
// The controller's pid: a rank whose parent is another exits at once. "0":
// no such check (a Slurm job step's parent is its slurmstepd).
inline constexpr const char* kEnvParentPid = "TUNERUN_PARENT_PID";
inline constexpr const char* kEnvHeartbeatS = "TUNERUN_HEARTBEAT_S";  // seconds between beats
// "1": after DONE the rank stays connected for another trial's START (reuse_workers).
inline constexpr const char* kEnvReuse = "TUNERUN_REUSE";
// The control channel's CURVE credentials (train/channel_keys.h): the controller's public key, and
// the path of the 0600 file of this rank's own keypair, "%t" standing for the rank.
inline constexpr const char* kEnvCurveServerKey = "TUNERUN_CURVE_SERVER_KEY";
inline constexpr const char* kEnvCurveKeyFile = "TUNERUN_CURVE_KEY_FILE";
// The host's name as the launcher knows it (an SSH hostfile's), which the
// rank names in its HELLO; unset: the host's own (gethostname).
inline constexpr const char* kEnvNodeName = "TUNERUN_NODE_NAME";

// The trial id of a prestarted rank (tune/launch/worker_groups.h) until the START
// that gives it a trial: it waits for that START without a deadline.
inline constexpr const char* kSpareTrialId = "~spare";

struct WorkerEnv {
  std::string controller;
  std::string trial_id;
  int rank = 0;
  int world_size = 1;
  int attempt = 0;
  long parent_pid = 0;
  double heartbeat_s = 2.0;
  std::string curve_server_key;
  CurveKeypair curve_keys;  // read from the file kEnvCurveKeyFile names for this rank

  // Reads the variables above and the key file; throws tune::Error naming a
  // missing or malformed one.
  static WorkerEnv from_environment();
  // The same from `lookup` (a variable's value, or nullptr when unset)
  // instead of this process's environment: a simulated rank's (tune/launch/sim/).
  static WorkerEnv from_variables(const std::function<const char*(const char*)>& lookup);
};

// A loopback TCP port free right now, for a group's rendezvous store
// (MASTER_PORT; rank 0 binds it moments later, and the kernel does not hand
// it out again that soon). Throws tune::Error when none can be found.
int free_loopback_port();

}  // namespace train

namespace tune {
// True in a process started by a tunerun controller as a worker. Code of a
// C++ program before Tuner::fit() runs in the driver and in every worker.
bool is_worker();
}  // namespace tune
