// Progress output while an experiment runs: a snapshot of every trial, the
// table it renders to, and the reporters that print it.
//
// On a terminal (stderr a TTY, TERM not "dumb") the live reporter keeps a
// table of the trials at the bottom of the screen and redraws it in place;
// the controller's log lines scroll above it. Colours follow the status
// (RUNNING green, PAUSED cyan, PENDING yellow, ERROR red) unless NO_COLOR is
// set to a non-empty value (https://no-color.org). When stderr is not a
// terminal there is no reporter and the controller prints plain lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune {

struct TrialRow {
  std::string id;
  TrialStatus status = TrialStatus::kPending;
  Json config;
  Json last_result;  // null until the first complete iteration
  int64_t iteration = 0;
  double time_total_s = 0;
  int64_t num_failures = 0;
  int64_t index = 0;  // creation order
};

struct ProgressSnapshot {
  std::string experiment;
  double elapsed_s = 0;
  std::string metric;  // empty: no metric to rank by
  Mode mode = Mode::kMax;
  std::vector<std::string> param_columns;  // dotted config keys the search varies
  std::vector<TrialRow> trials;            // in creation order
  // Finished trials left out of `trials` (a long experiment keeps only its
  // best finished rows), by status: counted in the header and the hidden line.
  std::map<TrialStatus, int64_t> omitted;
};

struct TableStyle {
  int width = 120;     // characters per line; longer lines are cut
  int max_rows = 20;   // trial rows at most; the rest are counted by status
  bool color = false;  // ANSI colours and bold
};

// The row's value of `metric` (a dotted key reaches into nested results);
// nullopt when it has none, or one that is not a finite number.
std::optional<double> metric_of(const TrialRow& row, const std::string& metric);

// Whether `a` ranks above `b`: a better value of `metric` under `mode`, or a
// value where `b` has none. Rows that tie rank neither way.
bool ranks_above(const TrialRow& a, const TrialRow& b, const std::string& metric, Mode mode);

// The table's lines (without newlines): a status header, the best trial so
// far, column titles, one row per shown trial and a count of the hidden
// ones. Rows are ordered RUNNING, PAUSED, PENDING, ERROR, TERMINATED; beyond
// max_rows the last ones are hidden, finished trials ranked best-first.
// Columns: trial, status, the param columns, iterations, total time, the
// experiment's metric, the other metrics reported. Until the table fits the
// width, the rightmost optional column (other metrics, then params) goes;
// then lines are cut.
std::vector<std::string> render_progress_table(const ProgressSnapshot& snapshot,
                                               const TableStyle& style);

// Receives the controller's log lines and periodic snapshots.
class ProgressReporter {
 public:
  virtual ~ProgressReporter() = default;
  // A log line (without newline) to print now.
  virtual void line(std::string_view text) = 0;
  // When the next update() is wanted; the controller builds snapshots only then.
  virtual std::chrono::steady_clock::time_point next_due() const = 0;
  virtual void update(const ProgressSnapshot& snapshot) = 0;
  // The experiment ended: draw `snapshot` one last time and leave it on screen.
  virtual void finish(const ProgressSnapshot& snapshot) = 0;
};

// The live table on a terminal, written to the file descriptor `fd`.
// `width`/`height` 0: asked of the terminal at every redraw.
class TerminalProgress : public ProgressReporter {
 public:
  TerminalProgress(int fd, bool color, double interval_s = 0.5, int width = 0, int height = 0);

  void line(std::string_view text) override;
  std::chrono::steady_clock::time_point next_due() const override;
  void update(const ProgressSnapshot& snapshot) override;
  void finish(const ProgressSnapshot& snapshot) override;

 private:
  TableStyle style() const;
  std::string erase() const;  // escape codes that erase the frame on screen
  void write_all(const std::string& out) const;

  int fd_;
  bool color_;
  std::chrono::steady_clock::duration interval_;
  int width_;
  int height_;
  std::vector<std::string> frame_;  // the lines on screen
  bool drawn_ = false;              // frame_ is on screen below the cursor
  std::chrono::steady_clock::time_point last_draw_{};
};

enum class ProgressMode { kAuto, kLive, kPlain };

// kAuto: a TerminalProgress on stderr when it is a terminal and TERM is not
// "dumb", else null (plain lines). kLive: always the live table on stderr;
// kPlain: null. Colour unless NO_COLOR is set and non-empty.
std::shared_ptr<ProgressReporter> make_progress_reporter(ProgressMode mode);

std::optional<ProgressMode> progress_mode_from_string(std::string_view text);

}  // namespace tune
