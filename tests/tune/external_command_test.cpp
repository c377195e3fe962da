// External command trainables end to end: sweeps over Python scripts (stdlib
// only) run through the tunerun binary, checked through the database and the
// rank logs (train/external_command.h is the contract).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "core/config.h"
#include "sqlite_query.h"
#include "test_util.h"

using tune::Json;
using tune::test::CommandResult;
using tune::test::query;
using tune::test::ScratchDir;

namespace {

// As run_tunerun, killed after `timeout_s`, so a command that is never
// stopped fails the test instead of hanging it.
CommandResult run_tunerun_within(const std::string& args, const std::filesystem::path& cwd,
                                 int timeout_s = 120) {
  const std::string cmd = "cd '" + cwd.string() + "' && timeout -s KILL " +
                          std::to_string(timeout_s) + " '" + std::string(TUNERUN_BINARY) + "' " +
                          args + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The one JSON line of `log` that starts with `prefix`, parsed.
Json json_line(const std::string& log, const std::string& prefix) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) return Json::parse(line.substr(prefix.size()));
  }
  FAIL("no line starting with '", prefix, "' in:\n", log);
  return nullptr;
}

constexpr const char* kEnvScript = R"(import json, os, sys
keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
env = {k: os.environ.get(k, "") for k in keys}
print("torchrun env " + json.dumps(env))
print("@tunerun " + json.dumps({
    "rank": int(env["RANK"]), "world_size": int(env["WORLD_SIZE"]),
    "local_rank": int(env["LOCAL_RANK"]), "master_addr": env["MASTER_ADDR"],
    "master_port": env["MASTER_PORT"], "argv": json.dumps(sys.argv[1:]),
    "param_x": os.environ["TUNERUN_PARAM_X"], "config": os.environ["TUNERUN_CONFIG"],
    "env_trial_id": os.environ["TUNERUN_TRIAL_ID"],
    "env_trial_dir": os.environ["TUNERUN_TRIAL_DIR"],
    "has_checkpoint": "TUNERUN_CHECKPOINT" in os.environ,
    "worker_var": "TUNERUN_WORKER" in os.environ}))
)";

}  // namespace

TEST_CASE("a 2-worker command trial gets torchrun's environment, its config and placeholders") {
  ScratchDir dir;
  dir.write("env_report.py", kEnvScript);
  dir.write("env.toml", R"(
name = "env"
[trainable]
command = ["python3", "env_report.py", "--x={x}", "{nested.label}", "{{literal}}"]
num_workers = 2
[resources]
cpus = 2
[param_space]
x = { grid_search = [1, 2.5] }
[param_space.nested]
label = "hello world"
)");
  auto run = run_tunerun_within("-q env.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);

  const auto experiment = dir.path() / "runs/env";
  auto rows = query(experiment / "experiment.db",
                    "SELECT r.trial_id, t.config, r.metrics FROM results r JOIN trials t "
                    "USING (trial_id) ORDER BY t.trial_index");
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    const std::string& trial_id = row[0];
    const Json config = Json::parse(row[1]);
    const Json metrics = Json::parse(row[2]);
    INFO(trial_id, " ", metrics.dump());
    // Rank 0's metrics are the ones stored.
    CHECK(metrics["rank"] == 0);
    CHECK(metrics["local_rank"] == 0);
    CHECK(metrics["world_size"] == 2);
    CHECK(metrics["master_addr"] == "127.0.0.1");
    CHECK_FALSE(metrics["master_port"].get<std::string>().empty());
    const std::string x = config["x"].dump();  // 1 or 2.5, as the placeholder writes it
    CHECK(Json::parse(metrics["argv"].get<std::string>()) ==
          Json{"--x=" + x, "hello world", "{literal}"});
    CHECK(metrics["param_x"] == x);
    CHECK(Json::parse(metrics["config"].get<std::string>()) == config);
    CHECK(metrics["env_trial_id"] == trial_id);
    CHECK(metrics["env_trial_dir"] == (experiment / "trials" / trial_id).string());
    CHECK(metrics["has_checkpoint"] == false);
    CHECK(metrics["worker_var"] == false);

    // Rank 1 saw its own rank and the same rendezvous: its plain output
    // line is in its rank log; report lines are not copied there.
    const std::string log1 = read_text(experiment / "trials" / trial_id / "rank_1.log");
    const Json env1 = json_line(log1, "torchrun env ");
    CHECK(env1["RANK"] == "1");
    CHECK(env1["LOCAL_RANK"] == "1");
    CHECK(env1["WORLD_SIZE"] == "2");
    CHECK(env1["LOCAL_WORLD_SIZE"] == "2");
    CHECK(env1["MASTER_ADDR"] == "127.0.0.1");
    CHECK(env1["MASTER_PORT"] == metrics["master_port"]);
    CHECK(log1.find("@tunerun") == std::string::npos);
    const std::string log0 = read_text(experiment / "trials" / trial_id / "rank_0.log");
    CHECK(json_line(log0, "torchrun env ")["RANK"] == "0");
  }
}

TEST_CASE("{{ and }} pass literal braces to a command, and a lone { is refused with a hint") {
  ScratchDir dir;
  // A JSON report written in the command line itself, a placeholder inside.
  dir.write("braces.toml", R"(
name = "braces"
metric = "v"
mode = "max"
[trainable]
command = ["sh", "-c", "echo '@tunerun {{\"v\": {x}, \"tag\": \"}}{{\"}}'"]
[param_space]
x = { grid_search = [1, 2] }
)");
  auto run = run_tunerun_within("-q braces.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  auto rows = query(dir.path() / "runs/braces/experiment.db",
                    "SELECT t.config, r.metrics FROM results r JOIN trials t USING (trial_id) "
                    "ORDER BY t.trial_index");
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    const Json metrics = Json::parse(row[1]);
    CHECK(metrics["v"] == Json::parse(row[0])["x"]);
    CHECK(metrics["tag"] == "}{");
  }

  // Unescaped, the JSON's brace opens a placeholder: refused before anything runs.
  dir.write("unescaped.toml", R"(
name = "unescaped"
[trainable]
command = ["sh", "-c", "echo '@tunerun {\"v\": 1}'"]
)");
  auto refused = run_tunerun_within("unescaped.toml", dir.path());
  CHECK(refused.exit_code == 2);
  CHECK(refused.output.find("unescaped.toml") != std::string::npos);
  CHECK(refused.output.find("write {{ and }} for literal braces") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/unescaped"));
}

TEST_CASE("ranks get their own GPUs as CUDA_VISIBLE_DEVICES, and trials wait for free ones") {
  ScratchDir dir;
  dir.write("gpu_report.py", R"(import os, time
print("visible " + os.environ.get("CUDA_VISIBLE_DEVICES", "unset") + " threads " +
      os.environ.get("OMP_NUM_THREADS", "unset"), flush=True)
time.sleep(0.2)  # holds its GPU a while: trials that share one must not overlap
print('@tunerun {"done": 1}')
)");
  // 3 GPUs declared: a trial needs 2 (2 ranks x 1), so only one runs at a time.
  dir.write("gpus.toml", R"(
name = "gpus"
num_samples = 3
[trainable]
command = ["python3", "gpu_report.py"]
num_workers = 2
gpus_per_worker = 1
threads_per_worker = 2
[resources]
cpus = 8
gpus = 3
)");
  const CommandResult run = run_tunerun_within("gpus.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto experiment = dir.path() / "runs" / "gpus";
  const auto rows =
      query(experiment / "experiment.db",
            "SELECT trial_id, started_at, finished_at FROM trials ORDER BY trial_index");
  REQUIRE(rows.size() == 3);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto trial = experiment / "trials" / rows[i][0];
    const std::string log0 = read_text(trial / "rank_0.log");
    const std::string log1 = read_text(trial / "rank_1.log");
    INFO(log0, log1);
    // Each rank has one device of its own, and the threads the spec names.
    CHECK(log0.find("visible 0 threads 2") != std::string::npos);
    CHECK(log1.find("visible 1 threads 2") != std::string::npos);
    if (i > 0) CHECK(std::stod(rows[i][1]) >= std::stod(rows[i - 1][2]));  // one at a time
  }
}

TEST_CASE("a trial needing more GPUs than the machine lends is bad input naming the key") {
  ScratchDir dir;
  dir.write("gpus.toml", R"(
name = "toomany"
[trainable]
command = ["true"]
num_workers = 2
gpus_per_worker = 1
[resources]
gpus = 1
)");
  const CommandResult run = run_tunerun_within("gpus.toml", dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("a trial needs 2 GPUs (2 workers x 1), but only 1 exist") !=
        std::string::npos);
  CHECK(run.output.find("trainable.gpus_per_worker") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs" / "toomany" / "experiment.db"));
}

TEST_CASE("a failing command ends its trial in ERROR with the exit status and its output") {
  ScratchDir dir;
  dir.write("fail.py", R"(import json, sys, time
mode = sys.argv[1]
if mode == "exit":
    print("@tunerun " + json.dumps({"loss": 1.0}))
    print("about to fail")
    sys.exit(3)
if mode == "malformed":
    print("starting")
    print("@tunerun {loss: 1}")
    time.sleep(600)  # the worker must end it, not wait for it
if mode == "nan":
    print("@tunerun " + json.dumps({"loss": float("nan"), "other": float("inf")}))
)");
  dir.write("fail.toml", R"(
name = "fail"
metric = "loss"
[trainable]
command = ["python3", "fail.py", "{mode}"]
[param_space]
mode = { grid_search = ["exit", "malformed", "nan"] }
)");
  // The malformed trial's command sleeps 600 s: the run ends, before
  // run_tunerun_within's kill, only if its worker ends the command.
  auto run = run_tunerun_within("-q fail.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 1);

  const auto db = dir.path() / "runs/fail/experiment.db";
  auto trials = query(db,
                      "SELECT json_extract(config, '$.mode'), status, error, last_iteration "
                      "FROM trials ORDER BY trial_index");
  REQUIRE(trials.size() == 3);
  CHECK(trials[0][1] == "ERROR");
  CHECK(trials[0][2].find("`python3 fail.py exit` exited with code 3 after 1 report(s)") !=
        std::string::npos);
  CHECK(trials[0][2].find("about to fail") != std::string::npos);
  CHECK(trials[0][3] == "1");
  CHECK(trials[1][1] == "ERROR");
  CHECK(trials[1][2].find("stdout line 2: malformed report `@tunerun {loss: 1}`") !=
        std::string::npos);
  CHECK(trials[1][2].find("parse error") != std::string::npos);
  // Python's NaN and Infinity are accepted, and stored as any non-finite metric
  // (storage/json_column.h): infinity as 1e999, NaN as null, both named aside.
  CHECK(trials[2][1] == "TERMINATED");
  auto nan = query(db,
                   "SELECT metrics, metrics_nonfinite FROM results r JOIN trials t "
                   "USING (trial_id) WHERE t.trial_index = 2");
  REQUIRE(nan.size() == 1);
  CHECK(nan[0][0] == R"({"loss":null,"other":1e999})");
  CHECK(Json::parse(nan[0][1]) == Json{{"/loss", "NaN"}, {"/other", "Infinity"}});

  dir.write("missing.toml", R"(
[trainable]
command = ["no-such-program-tunerun-test", "{x}"]
[param_space]
x = 1
)");
  auto missing = run_tunerun_within("-q missing.toml", dir.path());
  CHECK(missing.exit_code == 1);
  auto error = query(dir.path() / "runs/missing/experiment.db", "SELECT error FROM trials");
  REQUIRE(error.size() == 1);
  CHECK(error[0][0].find("cannot start the command `no-such-program-tunerun-test 1`: No such "
                         "file or directory") != std::string::npos);
}

TEST_CASE("a stop criterion terminates a command that would run forever, and nothing is left") {
  ScratchDir dir;
  dir.write("forever.py", R"(import json, os, signal, sys, time
with open(os.path.join(os.environ["TUNERUN_TRIAL_DIR"], "command.pid"), "w") as f:
    f.write(str(os.getpid()))
if sys.argv[1] == "true":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL ends this one
i = 0
while True:
    i += 1
    try:
        print("@tunerun " + json.dumps({"i": i}))
    except BrokenPipeError:
        while True:  # runs on, unheard: tunerun must end it
            time.sleep(1)
    time.sleep(0.01)  # a step's work
)");
  dir.write("forever.toml", R"(
name = "forever"
[trainable]
command = ["python3", "forever.py", "{ignore_sigterm}"]
[param_space]
ignore_sigterm = { grid_search = [false, true] }
[stop]
training_iteration = 3
)");
  auto run = run_tunerun_within("-q forever.toml", dir.path(), 90);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto experiment = dir.path() / "runs/forever";
  auto trials = query(experiment / "experiment.db",
                      "SELECT trial_id, status, last_iteration FROM trials ORDER BY trial_index");
  REQUIRE(trials.size() == 2);
  for (const auto& trial : trials) {
    INFO(trial[0]);
    CHECK(trial[1] == "TERMINATED");
    CHECK(trial[2] == "3");
    const pid_t pid = std::stoi(read_text(experiment / "trials" / trial[0] / "command.pid"));
    CHECK(kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
  }
  auto results = query(experiment / "experiment.db", "SELECT count(*) FROM results");
  CHECK(results[0][0] == "6");
}

TEST_CASE("a report line's checkpoint directory is published as the trial's checkpoint") {
  ScratchDir dir;
  dir.write("ckpt.py", R"(import json, os
for i in range(1, 4):
    d = "ckpt_%s_%d" % (os.environ["TUNERUN_TRIAL_ID"], i)  # relative to the working dir
    os.makedirs(d)
    with open(os.path.join(d, "state.json"), "w") as f:
        json.dump({"epoch": i}, f)
    print("@tunerun " + json.dumps({"loss": 1.0 / i, "checkpoint": d}))
)");
  dir.write("ckpt.toml", R"(
name = "ckpt"
metric = "loss"
[trainable]
command = ["python3", "ckpt.py"]
)");
  auto run = run_tunerun_within("-q ckpt.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto experiment = dir.path() / "runs/ckpt";
  auto checkpoints = query(experiment / "experiment.db",
                           "SELECT trial_id, training_iteration, path FROM checkpoints "
                           "ORDER BY training_iteration");
  REQUIRE(checkpoints.size() == 3);
  const std::string trial_id = checkpoints[0][0];
  for (int i = 1; i <= 3; ++i) {
    const auto& row = checkpoints[i - 1];
    CHECK(row[1] == std::to_string(i));
    CHECK(Json::parse(read_text(std::filesystem::path(row[2]) / "state.json")) ==
          Json{{"epoch", i}});
    // The files moved: the command's own directory is gone.
    CHECK_FALSE(
        std::filesystem::exists(dir.path() / ("ckpt_" + trial_id + "_" + std::to_string(i))));
  }
  CHECK(std::filesystem::exists(experiment / "trials" / trial_id / "checkpoint_000003/state.json"));
  // "checkpoint" is not a metric.
  auto metrics = query(experiment / "experiment.db",
                       "SELECT metrics FROM results WHERE training_iteration = 2");
  REQUIRE(metrics.size() == 1);
  CHECK(Json::parse(metrics[0][0]) == Json{{"loss", 0.5}});
}

TEST_CASE("the external command example runs as the README shows") {
  ScratchDir dir;
  const auto example = std::filesystem::path(TUNERUN_SOURCE_DIR) / "examples/external";
  std::filesystem::create_directories(dir.path() / "external");
  for (const char* file : {"train.py", "sweep.toml"}) {
    std::filesystem::copy_file(example / file, dir.path() / "external" / file);
  }
  auto run = run_tunerun_within("external/sweep.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("8 trials (8 TERMINATED, 0 ERROR)") != std::string::npos);
  auto best =
      query(dir.path() / "runs/external/experiment.db", "SELECT metric_value FROM best_trial");
  REQUIRE(best.size() == 1);
  CHECK(std::stod(best[0][0]) < 0.02);
  auto checkpoints =
      query(dir.path() / "runs/external/experiment.db", "SELECT count(*) FROM checkpoints");
  CHECK(std::stoi(checkpoints[0][0]) > 8);
}
