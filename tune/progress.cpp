#include "tune/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

namespace tune {
namespace {

using SteadyClock = std::chrono::steady_clock;

// After a log line erased the table, it comes back this soon (or at the next update).
constexpr auto kRedrawAfterLine = std::chrono::milliseconds(50);

// Keys every result carries; the table shows them in their own columns or not at all.
bool is_automatic_key(const std::string& key) {
  static const std::array<std::string_view, 9> kKeys{"training_iteration",
                                                     "time_this_iter_s",
                                                     "time_total_s",
                                                     "timestamp",
                                                     "trial_id",
                                                     "done",
                                                     "experiment",
                                                     "date",
                                                     "iterations_since_restore"};
  return std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end();
}

// Status order of the rows: what is happening now first.
int status_rank(TrialStatus s) {
  switch (s) {
    case TrialStatus::kRunning:
      return 0;
    case TrialStatus::kPaused:
      return 1;
    case TrialStatus::kPending:
      return 2;
    case TrialStatus::kError:
      return 3;
    case TrialStatus::kTerminated:
      return 4;
  }
  return 5;
}

std::string_view status_color(TrialStatus s) {
  switch (s) {
    case TrialStatus::kRunning:
      return "32";
    case TrialStatus::kPaused:
      return "36";
    case TrialStatus::kPending:
      return "33";
    case TrialStatus::kError:
      return "31";
    case TrialStatus::kTerminated:
      return "";
  }
  return "";
}

std::string format_value(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return fmt::format("{:.5g}", d);
  }
  if (v.is_number()) return v.dump();
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string cut(std::string text, size_t width) {
  if (text.size() <= width) return text;
  if (width == 0) return "";
  text.resize(width - 1);
  return text + "~";
}

std::string format_duration(double s) {
  const auto total = static_cast<int64_t>(s);
  if (total < 60) return fmt::format("{:.1f}s", s);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m{:02}s", total / 3600, total / 60 % 60, total % 60);
}

const Json* lookup(const Json& object, const std::string& dotted) {
  const Json* node = &object;
  size_t start = 0;
  while (true) {
    if (!node->is_object()) return nullptr;
    const size_t dot = dotted.find('.', start);
    auto it = node->find(dotted.substr(start, dot - start));
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

// Builds one line of at most `width` visible characters, colour codes not counted.
class LineBuilder {
 public:
  LineBuilder(size_t width, bool color) : width_(width), color_(color) {}

  void add(std::string_view text, std::string_view sgr = "") {
    if (visible_ >= width_) return;
    std::string part(text.substr(0, width_ - visible_));
    visible_ += part.size();
    if (color_ && !sgr.empty()) {
      out_ += fmt::format("\x1b[{}m{}\x1b[0m", sgr, part);
    } else {
      out_ += part;
    }
  }
  std::string take() { return std::move(out_); }

 private:
  size_t width_;
  bool color_;
  size_t visible_ = 0;
  std::string out_;
};

struct Column {
  std::string title;
  std::vector<std::string> cells;  // one per shown row
  size_t width = 0;
  bool droppable = false;
  bool is_status = false;  // coloured by the row's status
};

}  // namespace

std::optional<double> metric_of(const TrialRow& row, const std::string& metric) {
  if (metric.empty() || !row.last_result.is_object()) return std::nullopt;
  const Json* v = lookup(row.last_result, metric);
  if (!v || !v->is_number()) return std::nullopt;
  const double d = v->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

bool ranks_above(const TrialRow& a, const TrialRow& b, const std::string& metric, Mode mode) {
  auto va = metric_of(a, metric);
  auto vb = metric_of(b, metric);
  if (va && vb && *va != *vb) return mode == Mode::kMax ? *va > *vb : *va < *vb;
  return va.has_value() && !vb.has_value();
}

std::vector<std::string> render_progress_table(const ProgressSnapshot& snap,
                                               const TableStyle& style) {
  const size_t width = static_cast<size_t>(std::max(style.width, 20));
  std::vector<std::string> lines;

  // Header: the counts by status.
  std::map<int, int64_t> counts;
  for (const auto& t : snap.trials) ++counts[status_rank(t.status)];
  int64_t num_omitted = 0;
  for (const auto& [status, n] : snap.omitted) {
    counts[status_rank(status)] += n;
    num_omitted += n;
  }
  std::string counts_text;
  for (TrialStatus s : {TrialStatus::kRunning, TrialStatus::kPaused, TrialStatus::kPending,
                        TrialStatus::kTerminated, TrialStatus::kError}) {
    const int64_t n = counts[status_rank(s)];
    if (n == 0) continue;
    if (!counts_text.empty()) counts_text += ", ";
    counts_text += fmt::format("{} {}", n, to_string(s));
  }
  {
    LineBuilder header(width, style.color);
    header.add(fmt::format("== {} ", snap.experiment), "1");
    header.add(fmt::format("| {} | {} trials{}{}", format_duration(snap.elapsed_s),
                           static_cast<int64_t>(snap.trials.size()) + num_omitted,
                           counts_text.empty() ? "" : ": ", counts_text));
    lines.push_back(header.take());
  }

  // The best trial by its last result.
  const TrialRow* best = nullptr;
  std::optional<double> best_value;
  for (const auto& t : snap.trials) {
    auto v = metric_of(t, snap.metric);
    if (!v) continue;
    if (!best_value || (snap.mode == Mode::kMax ? *v > *best_value : *v < *best_value)) {
      best = &t;
      best_value = v;
    }
  }
  if (best) {
    std::string params;
    for (const auto& key : snap.param_columns) {
      if (const Json* v = lookup(best->config, key)) {
        params += fmt::format("{}{}={}", params.empty() ? "" : ", ", key, format_value(*v));
      }
    }
    LineBuilder line(width, style.color);
    line.add("Best: ");
    line.add(fmt::format("{} {}={}", best->id, snap.metric, format_value(*best_value)), "1");
    line.add(
        fmt::format(" at iteration {}{}{}", best->iteration, params.empty() ? "" : ": ", params));
    lines.push_back(line.take());
  }
  if (snap.trials.empty()) return lines;

  // Which rows: all when they fit, else by status order, finished ones best-first.
  std::vector<const TrialRow*> rows;
  for (const auto& t : snap.trials) rows.push_back(&t);
  const size_t max_rows = static_cast<size_t>(std::max(style.max_rows, 1));
  const bool crowded = rows.size() > max_rows || num_omitted > 0;
  std::stable_sort(rows.begin(), rows.end(), [&](const TrialRow* a, const TrialRow* b) {
    const int ra = status_rank(a->status), rb = status_rank(b->status);
    if (ra != rb) return ra < rb;
    return crowded && is_finished(a->status) && ranks_above(*a, *b, snap.metric, snap.mode);
  });
  std::map<int, std::pair<TrialStatus, int64_t>> hidden;  // by status rank: status, count
  for (const auto& [status, n] : snap.omitted) {
    if (n > 0) hidden[status_rank(status)] = {status, n};
  }
  if (rows.size() > max_rows) {
    for (size_t i = max_rows; i < rows.size(); ++i) {
      auto& [status, n] = hidden[status_rank(rows[i]->status)];
      status = rows[i]->status;
      ++n;
    }
    rows.resize(max_rows);
  }

  // Metric columns: the experiment's metric, then the others the shown rows report, by name.
  std::vector<std::string> metric_keys;
  if (!snap.metric.empty()) metric_keys.push_back(snap.metric);
  for (const auto* t : rows) {
    if (!t->last_result.is_object()) continue;
    for (const auto& [key, value] : t->last_result.items()) {
      if (is_automatic_key(key) || !value.is_number()) continue;
      if (std::find(metric_keys.begin(), metric_keys.end(), key) == metric_keys.end()) {
        metric_keys.push_back(key);
      }
    }
  }

  std::vector<Column> columns;
  auto add_column = [&](std::string title, bool droppable, auto cell_of) {
    Column c{std::move(title), {}, 0, droppable, false};
    for (const auto* t : rows) c.cells.push_back(cut(cell_of(*t), 24));
    c.width = c.title.size();
    for (const auto& cell : c.cells) c.width = std::max(c.width, cell.size());
    columns.push_back(std::move(c));
  };
  add_column("trial", false, [](const TrialRow& t) { return t.id; });
  add_column("status", false, [](const TrialRow& t) {
    return t.num_failures > 0 ? fmt::format("{} ({} failures)", to_string(t.status), t.num_failures)
                              : std::string(to_string(t.status));
  });
  columns.back().is_status = true;
  const size_t first_param = columns.size();
  for (const auto& key : snap.param_columns) {
    add_column(key, true, [&](const TrialRow& t) {
      const Json* v = lookup(t.config, key);
      return v ? format_value(*v) : std::string();
    });
  }
  add_column("iter", false, [](const TrialRow& t) {
    return t.iteration > 0 ? fmt::format("{}", t.iteration) : "";
  });
  add_column("total time (s)", false, [](const TrialRow& t) {
    return t.iteration > 0 ? fmt::format("{:.1f}", t.time_total_s) : "";
  });
  for (size_t i = 0; i < metric_keys.size(); ++i) {
    add_column(metric_keys[i], i > 0, [&](const TrialRow& t) {
      const Json* v = t.last_result.is_object() ? lookup(t.last_result, metric_keys[i]) : nullptr;
      return v ? format_value(*v) : std::string();
    });
  }

  // Drop optional columns from the right, extra metrics first, until the table fits.
  auto total_width = [&] {
    size_t w = 0;
    for (const auto& c : columns) w += c.width + 2;
    return w - 2;
  };
  while (total_width() > width) {
    auto victim = std::find_if(columns.rbegin(), columns.rend() - static_cast<long>(first_param),
                               [](const Column& c) { return c.droppable; });
    if (victim == columns.rend() - static_cast<long>(first_param)) break;
    columns.erase(std::next(victim).base());
  }

  auto row_line = [&](auto cell_of, std::string_view sgr_of_status) {
    LineBuilder line(width, style.color);
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string text = cell_of(c);
      line.add(fmt::format("{:<{}}", text, columns[c].width),
               columns[c].is_status ? sgr_of_status : "");
      if (c + 1 < columns.size()) line.add("  ");
    }
    std::string s = line.take();
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  lines.push_back(row_line([&](size_t c) { return columns[c].title; }, ""));
  for (size_t r = 0; r < rows.size(); ++r) {
    lines.push_back(
        row_line([&](size_t c) { return columns[c].cells[r]; }, status_color(rows[r]->status)));
  }
  if (!hidden.empty()) {
    std::string more;
    int64_t total = 0;
    for (const auto& [rank, entry] : hidden) {
      total += entry.second;
      more +=
          fmt::format("{}{} {}", more.empty() ? "" : ", ", entry.second, to_string(entry.first));
    }
    LineBuilder line(width, style.color);
    line.add(fmt::format("... and {} more trials: {}", total, more));
    lines.push_back(line.take());
  }
  return lines;
}

// ---- TerminalProgress ---------------------------------------------------------

TerminalProgress::TerminalProgress(int fd, bool color, double interval_s, int width, int height)
    : fd_(fd),
      color_(color),
      interval_(std::chrono::duration_cast<SteadyClock::duration>(
          std::chrono::duration<double>(interval_s))),
      width_(width),
      height_(height) {}

TableStyle TerminalProgress::style() const {
  int width = width_, height = height_;
  winsize ws{};
  if ((width == 0 || height == 0) && ioctl(fd_, TIOCGWINSZ, &ws) == 0) {
    if (width == 0) width = ws.ws_col;
    if (height == 0) height = ws.ws_row;
  }
  if (width <= 0) width = 100;
  if (height <= 0) height = 30;
  // One column spare: a line that fills the row exactly would wrap on some terminals.
  // Rows: the frame must fit on the screen, or moving up to redraw it would fall short.
  return TableStyle{width - 1, std::clamp(height - 8, 1, 30), color_};
}

std::string TerminalProgress::erase() const {
  if (!drawn_ || frame_.empty()) return "";
  return fmt::format("\x1b[{}A\r\x1b[J", frame_.size());
}

void TerminalProgress::write_all(const std::string& out) const {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::write(fd_, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal went away: progress output is best effort
    done += static_cast<size_t>(n);
  }
}

void TerminalProgress::line(std::string_view text) {
  // Print the line where the table was; the next update draws the table below it.
  std::string out = erase();
  drawn_ = false;
  out.append(text);
  out += '\n';
  write_all(out);
}

SteadyClock::time_point TerminalProgress::next_due() const {
  return last_draw_ + (drawn_ ? interval_ : kRedrawAfterLine);
}

void TerminalProgress::update(const ProgressSnapshot& snapshot) {
  // Erase the old frame and draw the new one in one write, so it does not flicker.
  std::string out = erase();
  frame_ = render_progress_table(snapshot, style());
  for (const auto& l : frame_) out += l + "\n";
  write_all(out);
  drawn_ = true;
  last_draw_ = SteadyClock::now();
}

void TerminalProgress::finish(const ProgressSnapshot& snapshot) {
  update(snapshot);
  frame_.clear();  // leave the final table on screen; later lines go below it
  drawn_ = false;
}

std::shared_ptr<ProgressReporter> make_progress_reporter(ProgressMode mode) {
  if (mode == ProgressMode::kPlain) return nullptr;
  const char* term = std::getenv("TERM");
  const bool terminal = ::isatty(STDERR_FILENO) && !(term && std::string_view(term) == "dumb");
  if (mode == ProgressMode::kAuto && !terminal) return nullptr;
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = terminal && !(no_color && *no_color);
  return std::make_shared<TerminalProgress>(STDERR_FILENO, color);
}

std::optional<ProgressMode> progress_mode_from_string(std::string_view text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "live") return ProgressMode::kLive;
  if (text == "plain") return ProgressMode::kPlain;
  return std::nullopt;
}

}  // namespace tune
