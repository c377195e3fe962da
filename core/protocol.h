// The control protocol between the controller and its workers.
//
// Transport: one ZeroMQ ROUTER socket in the controller (loopback tcp or an
// ipc path), one DEALER socket per worker rank, plus one DEALER per worker for
// heartbeats (so a long train step never delays them). Every ZeroMQ message is
// a single frame: a msgpack map with at least
//     "v": kVersion (int)    "t": message type (string, below)
// and the fields of that type. Unknown extra fields are ignored (so a newer
// peer may add fields); a missing or mistyped field, an unknown type, another
// version or bytes that are not msgpack are a ProtocolError, which the
// controller logs and drops without touching any trial.
//
// The conversation of one rank, in order:
//   worker -> HELLO {trial_id, rank, attempt, pid, host, step}
//   ctrl   -> START {trainable, library, config, trial_dir, experiment, world_size,
//                   checkpoint, start_iteration, command, trial_id, attempt,
//                   master_port, log_path, pipelined, continue_through,
//                   checkpoint_through}
//   worker -> REPORT {iteration, metrics, time_this_iter_s, time_total_s, checkpoint, reduce}
//             (iteration = start_iteration + 1, + 2, ...; checkpoint: this rank's files
//             for it are staged, see train/checkpoint.h)
//   ctrl   -> DECISION {iteration, decision, suspend, continue_through, trial_id,
//                      checkpoint_through}
//                                                 after every rank reported k, unless
//                                                 k is within a lease (continue_through)
//   ...
//   worker -> DONE {iterations}                   train function returned or was stopped
//   worker -> ERROR {message, where}              train function raised
//   worker -> HEARTBEAT {trial_id, rank, attempt} every heartbeat period, own socket
//
// With reuse_workers, a rank that said DONE stays connected and idle; the
// controller may send it the START of another trial (same rank, same world
// size), whose trial_id, attempt, master_port and log_path then replace what
// its environment said. An idle rank that hears nothing for 60 s exits.
// The controller may send DECISION STOP or PAUSE at any report; the rank's
// report() call then unwinds the train function and the rank answers DONE.
// A paused trial later gets a new group whose START names the checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune::core::protocol {

inline constexpr int kVersion = 1;
// A frame larger than this is rejected before it is parsed (metrics and
// configs are small; checkpoints travel as directories, never as messages).
inline constexpr size_t kMaxMessageBytes = 16 << 20;

struct Hello {
  std::string trial_id;
  int rank = 0;
  int attempt = 0;  // 0 for the first run of a trial, +1 per restart
  int64_t pid = 0;
  std::string host;  // the rank's hostname
  std::string step;  // its Slurm job step ("JOB.STEP"); empty outside Slurm
};

struct Start {
  std::string trainable;  // registered name the worker runs
  std::string library;    // shared library to load first; empty: the worker's own
  Json config;            // the trial's resolved config (a JSON object)
  std::string trial_dir;
  std::string experiment;
  int world_size = 1;
  std::string checkpoint;            // directory to resume from; empty for a fresh start
  int64_t start_iteration = 0;       // iterations done before this run (the checkpoint's)
  std::vector<std::string> command;  // an external command trainable's argv template; else empty
  std::string trial_id;              // the trial this run belongs to (a reused rank's new one)
  int attempt = 0;
  int master_port = 0;   // the group's rendezvous port (MASTER_PORT)
  std::string log_path;  // where the rank's stdout and stderr go
  // Reports without a checkpoint need not wait for their DECISION: the rank
  // goes on and awaits it at its next report (train/session.h says what
  // this promises). False: every report waits for its decision.
  bool pipelined = true;
  // The run's first lease (DecisionMsg::continue_through): its reports up to
  // this iteration are decided kContinue before they are made, so none
  // waits. <= start_iteration: the first report is decided on.
  int64_t continue_through = 0;
  // Its first checkpoint lease (DecisionMsg::checkpoint_through).
  int64_t checkpoint_through = 0;
};

struct Report {
  int64_t iteration = 0;  // the trial's training_iteration: start_iteration + report() calls
  Json metrics;           // a JSON object of the user's metrics
  double time_this_iter_s = 0;
  double time_total_s = 0;  // since this run started
  bool checkpoint = false;  // this rank staged checkpoint files for this iteration
  // Metrics reduced over ranks (wire: {metric: "mean"|"sum"|"min"|"max"}; any
  // other operation is a ProtocolError); every other metric is rank 0's.
  std::map<std::string, ReduceOp> reduce;
};

struct DecisionMsg {
  int64_t iteration = 0;
  Decision decision = Decision::kContinue;
  // With kPause: the rank suspends inside report() (says DONE with
  // `suspended`) and waits for a CONTINUE on the same iteration (the trial
  // resumes in place: nothing reloaded) or a START (it restarts from a
  // checkpoint), instead of ending its run.
  bool suspend = false;
  // With kContinue, a lease: the decisions on this run's reports up to this
  // iteration are kContinue (the scheduler and stoppers cannot decide
  // otherwise before), so the rank does not wait for them and the controller
  // sends none, except for a report with a checkpoint and for a stop or
  // pause decided from outside (an interrupt, stop_all): those arrive for an
  // iteration the rank may have passed, and it applies them at its next
  // report. <= iteration: no lease.
  int64_t continue_through = 0;
  // The trial decided on. A reused rank may already run its next trial when
  // a decision on its last one arrives: it drops that one.
  std::string trial_id;
  // A checkpoint lease: the scheduler neither pauses the trial nor lets
  // another clone it on this run's reports up to this iteration, so none
  // needs a checkpoint for it (train::should_checkpoint). At least
  // continue_through when sent with kContinue; 0: unchanged.
  int64_t checkpoint_through = 0;
};

struct Done {
  int64_t iterations = 0;
  bool suspended = false;  // the rank waits inside report() (DecisionMsg::suspend)
};

struct ErrorMsg {
  std::string message;
  std::string where;  // e.g. "rank 1: train function", or a file:line when known
};

struct Heartbeat {
  std::string trial_id;
  int rank = 0;
  int attempt = 0;
};

using Message = std::variant<Hello, Start, Report, DecisionMsg, Done, ErrorMsg, Heartbeat>;

// The wire name of a message's type ("hello", "start", ...).
std::string_view type_name(const Message& message);

std::string encode(const Message& message);

// Throws ProtocolError saying why `bytes` is not a valid message.
Message decode(std::string_view bytes);

}  // namespace tune::core::protocol

namespace tune {
namespace protocol = core::protocol;
}  // namespace tune
