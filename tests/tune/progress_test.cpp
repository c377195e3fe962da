// The progress table: what it shows (rows, columns, best trial, widths,
// colours) and the live table on a terminal, down to the screen a user sees
// after `tunerun` ran in a pseudo-terminal.
#include "tune/progress.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/tune/test_util.h"

namespace tune {
namespace {

// The screen a terminal shows after `output`: the subset of VT100 the
// reporter writes (CR, LF, cursor up, erase below, SGR), lines wrapping at `width`.
std::vector<std::string> screen_after(const std::string& output, size_t width) {
  std::vector<std::string> screen(1);
  size_t row = 0, col = 0;
  for (size_t i = 0; i < output.size(); ++i) {
    const char c = output[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      if (++row == screen.size()) screen.emplace_back();
      col = 0;  // output post-processing (ONLCR) sends \r\n anyway
    } else if (c == '\x1b' && i + 1 < output.size() && output[i + 1] == '[') {
      size_t end = i + 2;
      while (end < output.size() && !std::isalpha(static_cast<unsigned char>(output[end]))) ++end;
      const std::string arg = output.substr(i + 2, end - i - 2);
      const char op = output[end];
      if (op == 'A') {
        row -= std::min(row, static_cast<size_t>(arg.empty() ? 1 : std::stoul(arg)));
      } else if (op == 'J') {
        screen[row].resize(std::min(screen[row].size(), col));
        screen.resize(row + 1);
      }
      i = end;
    } else {
      if (col == width) {
        if (++row == screen.size()) screen.emplace_back();
        col = 0;
      }
      std::string& line = screen[row];
      if (line.size() <= col) line.resize(col + 1, ' ');
      line[col++] = c;
    }
  }
  while (!screen.empty() && screen.back().empty()) screen.pop_back();
  return screen;
}

TrialRow row(std::string id, TrialStatus status, double lr, std::optional<double> acc,
             int64_t iteration = 0) {
  TrialRow r{std::move(id),
             status,
             Json{{"lr", lr}, {"model", {{"width", 64}}}},
             nullptr,
             iteration,
             0.5 * static_cast<double>(iteration),
             0};
  if (acc) r.last_result = {{"accuracy", *acc}, {"loss", 1 - *acc}, {"training_iteration", 3}};
  return r;
}

ProgressSnapshot snapshot_of(std::vector<TrialRow> trials) {
  return ProgressSnapshot{
      "exp", 75.0, "accuracy", Mode::kMax, {"lr", "model.width"}, std::move(trials)};
}

size_t count_lines_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  return std::count_if(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

std::string line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines) {
    if (l.rfind(prefix, 0) == 0) return l;
  }
  return "";
}

TEST_CASE("progress table: header counts, best trial, rows in status order, columns") {
  auto lines =
      render_progress_table(snapshot_of({row("t0", TrialStatus::kTerminated, 0.1, 0.7, 9),
                                         row("t1", TrialStatus::kRunning, 0.2, 0.8, 3),
                                         row("t2", TrialStatus::kPending, 0.3, std::nullopt),
                                         row("t3", TrialStatus::kError, 0.4, 0.2, 1),
                                         row("t4", TrialStatus::kPaused, 0.5, 0.75, 4)}),
                            TableStyle{120, 20, false});
  REQUIRE(lines.size() == 8);
  CHECK(lines[0] ==
        "== exp | 1m15s | 5 trials: 1 RUNNING, 1 PAUSED, 1 PENDING, 1 TERMINATED, 1 ERROR");
  CHECK(lines[1] == "Best: t1 accuracy=0.8 at iteration 3: lr=0.2, model.width=64");
  CHECK(lines[2] == "trial  status      lr   model.width  iter  total time (s)  accuracy  loss");
  CHECK(lines[3] == "t1     RUNNING     0.2  64           3     1.5             0.8       0.2");
  CHECK(lines[4].rfind("t4     PAUSED", 0) == 0);
  CHECK(lines[5] == "t2     PENDING     0.3  64");
  CHECK(lines[6].rfind("t3     ERROR", 0) == 0);
  CHECK(lines[7].rfind("t0     TERMINATED", 0) == 0);
  for (const auto& l : lines) CHECK(l.find('\x1b') == std::string::npos);
}

TEST_CASE("progress table: NaN and inf never make the best trial, min mode picks the lowest") {
  auto snap = snapshot_of(
      {row("a", TrialStatus::kRunning, 0.1, 0.5, 1),
       row("b", TrialStatus::kRunning, 0.1, std::numeric_limits<double>::quiet_NaN(), 1),
       row("c", TrialStatus::kRunning, 0.1, std::numeric_limits<double>::infinity(), 1),
       row("d", TrialStatus::kRunning, 0.1, 0.3, 1)});
  CHECK(render_progress_table(snap, {})[1].rfind("Best: a accuracy=0.5", 0) == 0);
  snap.mode = Mode::kMin;
  CHECK(render_progress_table(snap, {})[1].rfind("Best: d accuracy=0.3", 0) == 0);
  auto lines = render_progress_table(snap, {});
  CHECK(line_starting(lines, "b ").find("nan") != std::string::npos);
}

TEST_CASE(
    "progress table: beyond max_rows, running trials stay and finished ones show best-first") {
  std::vector<TrialRow> trials;
  for (int i = 0; i < 30; ++i) {
    trials.push_back(row(fmt::format("t{:02}", i), TrialStatus::kTerminated, 0.1, i / 100.0, 5));
  }
  trials.push_back(row("run", TrialStatus::kRunning, 0.1, 0.01, 1));
  auto lines = render_progress_table(snapshot_of(trials), TableStyle{120, 4, false});
  REQUIRE(lines.size() == 2 + 1 + 4 + 1);
  CHECK(lines[3].rfind("run ", 0) == 0);
  CHECK(lines[4].rfind("t29 ", 0) == 0);
  CHECK(lines[5].rfind("t28 ", 0) == 0);
  CHECK(lines[6].rfind("t27 ", 0) == 0);
  CHECK(lines[7] == "... and 27 more trials: 27 TERMINATED");
}

TEST_CASE("progress table: a narrow width drops extra metrics, then params, and cuts lines") {
  auto snap = snapshot_of({row("trial_0001", TrialStatus::kRunning, 0.123456, 0.8, 3)});
  auto wide = render_progress_table(snap, TableStyle{200, 20, false});
  CHECK(wide[2].find("loss") != std::string::npos);

  auto medium = render_progress_table(snap, TableStyle{75, 20, false});
  CHECK(medium[2].find("loss") == std::string::npos);
  CHECK(medium[2].find("accuracy") != std::string::npos);
  CHECK(medium[2].find(" lr ") != std::string::npos);

  auto narrow = render_progress_table(snap, TableStyle{56, 20, false});
  CHECK(narrow[2].find("model.width") == std::string::npos);
  CHECK(narrow[2].find("lr") == std::string::npos);
  CHECK(narrow[2].find("accuracy") != std::string::npos);

  auto tiny = render_progress_table(snap, TableStyle{30, 20, false});
  for (const auto& l : tiny) CHECK(l.size() <= 30);
  CHECK(tiny[3].rfind("trial_0001  RUNNING", 0) == 0);
}

TEST_CASE("progress table: colour marks the status cells and the header, and only with colour on") {
  auto snap = snapshot_of(
      {row("r", TrialStatus::kRunning, 0.1, 0.5, 1), row("e", TrialStatus::kError, 0.1, 0.5, 1)});
  auto lines = render_progress_table(snap, TableStyle{120, 20, true});
  CHECK(lines[0].find("\x1b[1m== exp") != std::string::npos);
  CHECK(line_starting(lines, "r ").find("\x1b[32mRUNNING") != std::string::npos);
  CHECK(line_starting(lines, "e ").find("\x1b[31mERROR") != std::string::npos);
  // Colour codes do not count against the width: the visible text is the same.
  auto plain = render_progress_table(snap, TableStyle{120, 20, false});
  CHECK(screen_after(lines[3] + "\n", 200)[0] == plain[3]);
}

TEST_CASE("terminal progress: log lines scroll above one table that is redrawn in place") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  TerminalProgress progress(fds[1], false, 0.0, 80, 40);
  progress.line("first line");
  progress.update(snapshot_of({row("a", TrialStatus::kRunning, 0.1, 0.5, 1)}));
  progress.update(snapshot_of({row("a", TrialStatus::kRunning, 0.1, 0.6, 2),
                               row("b", TrialStatus::kPending, 0.2, std::nullopt)}));
  progress.line("second line");
  progress.update(snapshot_of({row("a", TrialStatus::kTerminated, 0.1, 0.7, 3),
                               row("b", TrialStatus::kRunning, 0.2, 0.4, 1)}));
  progress.finish(snapshot_of({row("a", TrialStatus::kTerminated, 0.1, 0.7, 3),
                               row("b", TrialStatus::kTerminated, 0.2, 0.9, 3)}));
  progress.line("after the end");
  close(fds[1]);
  std::string output;
  char buffer[4096];
  while (ssize_t n = read(fds[0], buffer, sizeof buffer)) {
    if (n < 0) break;
    output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);

  const auto screen = screen_after(output, 80);
  REQUIRE(screen.size() == 8);
  CHECK(screen[0] == "first line");
  CHECK(screen[1] == "second line");
  CHECK(screen[2].rfind("== exp | 1m15s | 2 trials: 2 TERMINATED", 0) == 0);
  CHECK(screen[3].rfind("Best: b accuracy=0.9", 0) == 0);
  CHECK(screen[4].rfind("trial", 0) == 0);
  CHECK(screen[5].rfind("a ", 0) == 0);  // creation order while every row fits
  CHECK(screen[6].rfind("b ", 0) == 0);
  CHECK(screen[7] == "after the end");
}

// Runs `tunerun ARGS` in `cwd` on a 100x30 pseudo-terminal; returns its raw output.
test::CommandResult run_in_terminal(const std::vector<std::string>& args,
                                    const std::filesystem::path& cwd, bool no_color) {
  winsize size{30, 100, 0, 0};
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    setenv("TERM", "xterm", 1);
    if (no_color) {
      setenv("NO_COLOR", "1", 1);
    } else {
      unsetenv("NO_COLOR");
    }
    std::vector<char*> argv{const_cast<char*>(TUNERUN_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  test::CommandResult result;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(master, buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO: the child closed the terminal
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

constexpr const char* kSweep = R"(name = "progress"
metric = "accuracy"
mode = "max"
num_samples = 4
max_concurrent_trials = 2
seed = 1
[trainable]
builtin = "learning_curve"
[param_space]
ceiling = { uniform = [0.6, 0.95] }
speed = { loguniform = [0.05, 0.5] }
sleep_s = 0.05
[stop]
training_iteration = 12
)";

TEST_CASE("tunerun on a terminal: the final screen holds one table with every trial, in colour") {
  test::ScratchDir dir;
  dir.write("sweep.toml", kSweep);
  auto result = run_in_terminal({"sweep.toml"}, dir.path(), false);
  REQUIRE(result.exit_code == 0);
  CHECK(result.output.find("\x1b[32mRUNNING") != std::string::npos);  // drawn while running
  CHECK(result.output.find("\x1b[1m== progress") != std::string::npos);
  const auto screen = screen_after(result.output, 100);
  CHECK(count_lines_starting(screen, "== progress |") == 1);
  CHECK(count_lines_starting(screen, "trial ") == 1);
  for (int i = 0; i < 4; ++i) {
    const std::string id = fmt::format("progress_{:05}", i);
    CHECK(count_lines_starting(screen, id + " ") == 1);
    CHECK(line_starting(screen, id + " ").find("TERMINATED") != std::string::npos);
  }
  CHECK(line_starting(screen, "== progress |").find("4 trials: 4 TERMINATED") != std::string::npos);
  CHECK(count_lines_starting(screen, "Best trial progress_") == 1);  // the summary, below
}

TEST_CASE("tunerun with NO_COLOR keeps the live table without colours") {
  test::ScratchDir dir;
  dir.write("sweep.toml", kSweep);
  auto result = run_in_terminal({"sweep.toml"}, dir.path(), true);
  REQUIRE(result.exit_code == 0);
  CHECK(result.output.find("\x1b[J") != std::string::npos);
  CHECK(result.output.find("\x1b[1m") == std::string::npos);
  CHECK(result.output.find("\x1b[3") == std::string::npos);
  CHECK(count_lines_starting(screen_after(result.output, 100), "== progress |") == 1);
}

TEST_CASE("tunerun without a terminal prints plain lines, and --progress plain on one too") {
  test::ScratchDir dir;
  dir.write("sweep.toml", kSweep);
  auto piped = test::run_tunerun("sweep.toml", dir.path());
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.output.find('\x1b') == std::string::npos);
  CHECK(piped.output.find("progress_00003 TERMINATED") != std::string::npos);

  auto plain = run_in_terminal({"run", "--name", "again", "--progress", "plain", "sweep.toml"},
                               dir.path(), false);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.output.find('\x1b') == std::string::npos);
  CHECK(plain.output.find("again_00003 TERMINATED") != std::string::npos);
}

TEST_CASE("progress table: 1,000 running trials show their counts, the best and max_rows rows") {
  std::vector<TrialRow> trials;
  for (int i = 0; i < 1000; ++i) {
    trials.push_back(row(fmt::format("t{:04}", i), TrialStatus::kRunning, 0.1, i / 2000.0, 3));
  }
  auto lines = render_progress_table(snapshot_of(trials), TableStyle{120, 20, false});
  REQUIRE(lines.size() == 2 + 1 + 20 + 1);
  CHECK(lines[0] == "== exp | 1m15s | 1000 trials: 1000 RUNNING");
  CHECK(lines[1].rfind("Best: t0999 accuracy=0.4995", 0) == 0);
  CHECK(lines[3].rfind("t0000 ", 0) == 0);
  CHECK(lines[22].rfind("t0019 ", 0) == 0);
  CHECK(lines.back() == "... and 980 more trials: 980 RUNNING");
}

TEST_CASE("progress table: finished trials left out of the snapshot are counted, not lost") {
  std::vector<TrialRow> trials = {row("best", TrialStatus::kTerminated, 0.1, 0.9, 5),
                                  row("run", TrialStatus::kRunning, 0.1, 0.5, 1)};
  ProgressSnapshot snap = snapshot_of(trials);
  snap.omitted = {{TrialStatus::kTerminated, 99998}, {TrialStatus::kError, 2}};
  auto lines = render_progress_table(snap, TableStyle{120, 20, false});
  CHECK(lines[0] == "== exp | 1m15s | 100002 trials: 1 RUNNING, 99999 TERMINATED, 2 ERROR");
  CHECK(lines[1].rfind("Best: best accuracy=0.9", 0) == 0);
  CHECK(lines[3].rfind("run ", 0) == 0);
  CHECK(lines[4].rfind("best ", 0) == 0);
  CHECK(lines.back() == "... and 100000 more trials: 2 ERROR, 99998 TERMINATED");
}

}  // namespace
}  // namespace tune
