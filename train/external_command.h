// External command trainables: any program (Python, shell, a binary) as a
// trial, with its config in its arguments and environment and its metrics
// printed on stdout.
//
//   [trainable]
//   command = ["python3", "train.py", "--lr", "{lr}", "--width", "{model.width}"]
//   num_workers = 2       # optional: one command per rank, torchrun's environment
//
// ARGUMENTS. Each `{key}` in an argument is replaced by the config's value at
// `key`; `{a.b}` reaches into nested tables ([param_space.a] b = ...). Strings
// are inserted as they are, numbers in their shortest exact form (0.001,
// 1e-05, 64), booleans as true/false, tables and lists as JSON. `{{` and `}}`
// stand for literal braces (a lone `}` is literal too; a lone `{` always opens
// a placeholder), so JSON in an argument is written with doubled braces:
//
//   command = ["sh", "-c", "echo '@tunerun {{\"loss\": {lr}}}'"]
//
// prints `@tunerun {"loss": 0.01}` for lr = 0.01. A key the config lacks
// fails the trial with an error naming the key; `tunerun validate` checks the
// keys against the param space before anything runs.
//
// ENVIRONMENT. The command inherits the worker's environment (its working
// directory is the sweep file's directory), plus:
//   TUNERUN_CONFIG        the whole config as a JSON object
//   TUNERUN_PARAM_<KEY>   each top-level value that is not a table or a list,
//                         formatted as in arguments; KEY is the name upper-cased
//                         with every character other than A-Z, 0-9 and _ as _
//                         (lr -> TUNERUN_PARAM_LR, batch-size -> TUNERUN_PARAM_BATCH_SIZE)
//   TUNERUN_TRIAL_ID      e.g. mysweep_00003
//   TUNERUN_TRIAL_DIR     the trial's directory (absolute); write files there
//   TUNERUN_CHECKPOINT    set only when the trial resumes (after a pause, a
//                         failure, a restore, or a PBT exploit): the absolute
//                         path of the checkpoint directory to load. Read-only.
//   TUNERUN_ATTEMPT       0 for the first run of a trial, +1 per restart
//   RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
//                         as torchrun sets them, so a torch.distributed script
//                         runs unchanged with init_process_group("gloo"/"nccl")
//   PYTHONUNBUFFERED=1    unless already set, so Python's print() reaches us at once
// Programs in other languages must flush stdout after each report line, or
// their reports arrive late (when the buffer fills or the program exits).
//
// STDOUT: THE LINE PROTOCOL. A line that starts with `@tunerun ` followed by
// a JSON object is one report, the same as a call of train::report:
//
//   @tunerun {"loss": 0.31, "accuracy": 0.88}
//   @tunerun {"loss": 0.27, "checkpoint": "ckpt/epoch_2"}
//
// - Keys are metric names; values numbers, strings, booleans or null.
// - Optional "checkpoint": a directory (absolute, or relative to the command's
//   working directory) holding the state saved at this iteration. It is not
//   a metric. tunerun MOVES its files into the trial's
//   checkpoint_<iteration:06d>/ (the directory is gone afterwards), so save
//   each checkpoint into a fresh directory. With several ranks, the files of
//   all ranks for one iteration are merged: use rank-specific names.
// - Every rank's command must print the same number of report lines; the
//   metrics stored are rank 0's.
// - The next line is read only after the controller has decided on this
//   report. The command itself is not held meanwhile: it runs on until the
//   pipe is full (64 KiB of output), which in a real training loop (seconds
//   per report, milliseconds per decision) means it starts its next
//   iteration. When the decision is to stop or pause the trial (a [stop]
//   criterion, a scheduler), the command gets SIGTERM, and SIGKILL 5 s later
//   if it is still running; the trial then ends normally, and whatever the
//   command did after its last read report is discarded (checkpoint
//   directories it wrote but never reported stay where it wrote them).
//   Commands that start processes of their own should forward SIGTERM to
//   them (in a shell script, `exec` the last program).
// - Every other line is copied unchanged to the rank's log,
//   trials/<trial_id>/rank_<N>.log, as is the command's stderr.
//
// OUTCOME. Exit code 0 ends the trial TERMINATED (after its last report). A
// non-zero exit code, death by a signal we did not send, a line that starts
// with `@tunerun ` but is not a JSON object (the error names the line number
// and the parse error), or a command that cannot be started fails the trial
// (ERROR), with the exit status and the command's last output lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "train/checkpoint.h"

namespace train {

// Runs the command of an external command trainable as this worker's train
// function (see above); returns when the command has exited with code 0.
// Throws tune::TrialError when it fails, tune::ConfigError for a placeholder
// the config lacks, and lets train::report's stop signal propagate after the
// command has been terminated and reaped. Call only inside a worker.
void run_external_command(const std::vector<std::string>& argv_template,
                          const tune::Config& config);

// The keys the placeholders of `argv_template` name, in order of appearance
// (duplicates kept). Throws tune::ConfigError for an unclosed `{` or an
// empty `{}`.
std::vector<std::string> placeholder_keys(const std::vector<std::string>& argv_template);

namespace detail {

// `arg` with its placeholders filled from `config`. Throws tune::ConfigError
// naming the key that `config` lacks.
std::string fill_placeholders(std::string_view arg, const tune::Json& config);

// A config value as it appears in arguments and TUNERUN_PARAM_* variables.
std::string format_value(const tune::Json& value);

// "lr" -> "TUNERUN_PARAM_LR".
std::string param_env_name(std::string_view key);

// One `@tunerun` line, parsed. `checkpoint` is the "checkpoint" value, taken
// out of `metrics`.
struct ReportLine {
  tune::Json metrics;
  std::optional<std::string> checkpoint;
};

// nullopt when `line` is not a report (does not start with "@tunerun ").
// Throws tune::TrialError naming `line_number` when it is a malformed one.
std::optional<ReportLine> parse_report_line(std::string_view line, int64_t line_number);

}  // namespace detail
}  // namespace train
