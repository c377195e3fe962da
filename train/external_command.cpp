#include "train/external_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <thread>

#include "core/errors.h"
#include "train/session.h"

extern char** environ;

namespace train {
namespace {

using tune::Json;

constexpr std::string_view kReportPrefix = "@tunerun";
// SIGTERM to SIGKILL, when a stopped trial's command does not exit.
constexpr auto kTerminateGrace = std::chrono::seconds(5);
// Output lines kept for the error message of a failed command.
constexpr size_t kTailLines = 5;
constexpr size_t kTailLineChars = 200;

// Walks the placeholders of `arg`: `on_text` gets literal text (braces
// unescaped), `on_key` each key. Throws ConfigError for `{` without `}`.
void scan_placeholders(std::string_view arg, const std::function<void(std::string_view)>& on_text,
                       const std::function<void(const std::string&)>& on_key) {
  size_t i = 0;
  while (i < arg.size()) {
    const char c = arg[i];
    if ((c == '{' || c == '}') && i + 1 < arg.size() && arg[i + 1] == c) {
      on_text(arg.substr(i, 1));
      i += 2;
    } else if (c == '{') {
      const size_t end = arg.find_first_of("{}", i + 1);
      if (end == std::string_view::npos || arg[end] != '}') {
        throw tune::ConfigError::at_key(
            "trainable.command",
            fmt::format("unclosed '{{' in command argument '{}' (write '{{{{' for a brace)", arg));
      }
      std::string key(arg.substr(i + 1, end - i - 1));
      if (key.empty()) {
        throw tune::ConfigError::at_key(
            "trainable.command",
            fmt::format("empty placeholder '{{}}' in command argument '{}'", arg));
      }
      on_key(key);
      i = end + 1;
    } else {
      const size_t end = arg.find_first_of("{}", i + 1);
      const size_t stop = end == std::string_view::npos ? arg.size() : end;
      on_text(arg.substr(i, stop - i));
      i = stop;
    }
  }
}

// The value at `key`: a top-level key as written, else a dotted path.
const Json* lookup(const Json& config, const std::string& key) {
  if (auto it = config.find(key); it != config.end()) return &*it;
  const Json* node = &config;
  size_t start = 0;
  while (start <= key.size()) {
    const size_t dot = std::min(key.find('.', start), key.size());
    if (!node->is_object()) return nullptr;
    auto it = node->find(key.substr(start, dot - start));
    if (it == node->end()) return nullptr;
    node = &*it;
    start = dot + 1;
  }
  return node;
}

// Python's json.dumps writes NaN, Infinity and -Infinity, which JSON lacks:
// outside strings they become marker strings, turned back into doubles after
// parsing.
constexpr std::string_view kNonFinite[] = {"-Infinity", "Infinity", "NaN"};
std::string mark_non_finite(std::string_view text) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (auto token : kNonFinite) {
      if (text.substr(i).starts_with(token)) {
        out += fmt::format("\"\\u0000{}\"", token);
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

void unmark_non_finite(Json& value) {
  if (value.is_structured()) {
    for (auto& child : value) unmark_non_finite(child);
  } else if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (s.empty() || s[0] != '\0') return;
    const double inf = std::numeric_limits<double>::infinity();
    // Assigning to value frees s: nothing reads it after a match.
    if (s == std::string("\0NaN", 4)) {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (s == std::string("\0Infinity", 9)) {
      value = inf;
    } else if (s == std::string("\0-Infinity", 10)) {
      value = -inf;
    }
  }
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("was killed by signal {} ({})", sig, strsignal(sig));
  }
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

std::string quote_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  for (const auto& arg : argv) {
    const bool plain = !arg.empty() && arg.find_first_of(" \t'\"\\$") == std::string::npos;
    quoted.push_back(plain ? arg : fmt::format("'{}'", arg));
  }
  return fmt::format("{}", fmt::join(quoted, " "));
}

// The command's environment: the worker's, minus the variables that would
// make a tunerun program believe it is this worker, plus the trial's.
std::vector<std::string> command_environment(const tune::Config& config, const Context& context) {
  std::vector<std::string> env;
  bool python_unbuffered = false;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view var(*e);
    if (var.starts_with("TUNERUN_") && !var.starts_with("TUNERUN_ATTEMPT=")) continue;
    python_unbuffered = python_unbuffered || var.starts_with("PYTHONUNBUFFERED=");
    env.emplace_back(var);
  }
  if (!python_unbuffered) env.emplace_back("PYTHONUNBUFFERED=1");
  env.push_back("TUNERUN_CONFIG=" + config.dump());
  for (const auto& [key, value] : config.json().items()) {
    if (value.is_structured()) continue;
    env.push_back(detail::param_env_name(key) + "=" + detail::format_value(value));
  }
  env.push_back("TUNERUN_TRIAL_ID=" + context.trial_id);
  env.push_back("TUNERUN_TRIAL_DIR=" + context.trial_dir);
  if (auto checkpoint = get_checkpoint()) {
    env.push_back("TUNERUN_CHECKPOINT=" + std::filesystem::absolute(checkpoint->path()).string());
  }
  return env;
}

// The running command: its stdout is a pipe to us, its stderr ours. The
// destructor terminates (SIGTERM, then SIGKILL after kTerminateGrace) and
// reaps a command still running, so no path out of run_external_command
// leaves one behind.
class CommandProcess {
 public:
  CommandProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      throw tune::TrialError(fmt::format("cannot create a pipe: {}", strerror(errno)));
    }
    stdout_fd_ = fds[0];
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    std::vector<char*> c_argv, c_env;
    for (const auto& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
    c_argv.push_back(nullptr);
    for (const auto& e : env) c_env.push_back(const_cast<char*>(e.c_str()));
    c_env.push_back(nullptr);
    const int rc =
        posix_spawnp(&pid_, argv[0].c_str(), &actions, &attr, c_argv.data(), c_env.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
      close(stdout_fd_);
      throw tune::TrialError(
          fmt::format("cannot start the command `{}`: {}", quote_argv(argv), strerror(rc)));
    }
  }
  CommandProcess(const CommandProcess&) = delete;
  CommandProcess& operator=(const CommandProcess&) = delete;

  ~CommandProcess() {
    close_stdout();
    if (!reaped_) terminate();
  }

  // The next line of the command's stdout without its newline (and a
  // trailing '\r'); nullopt at end of output.
  std::optional<std::string> next_line() {
    while (true) {
      if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (stdout_fd_ < 0) {
        if (buffer_.empty()) return std::nullopt;
        return std::exchange(buffer_, {});
      }
      char chunk[65536];
      const ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_stdout();
      } else {
        buffer_.append(chunk, static_cast<size_t>(n));
      }
    }
  }

  // Waits for the command to exit; its wait status.
  int wait() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return status;
  }

 private:
  void close_stdout() {
    if (stdout_fd_ >= 0) close(stdout_fd_);
    stdout_fd_ = -1;
  }

  void terminate() noexcept {
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kTerminateGrace;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || (r < 0 && errno != EINTR)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace

namespace detail {

std::string format_value(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string param_env_name(std::string_view key) {
  std::string name = "TUNERUN_PARAM_";
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    name += std::isalnum(u) ? static_cast<char>(std::toupper(u)) : '_';
  }
  return name;
}

std::string fill_placeholders(std::string_view arg, const Json& config) {
  std::string out;
  scan_placeholders(
      arg, [&](std::string_view text) { out += text; },
      [&](const std::string& key) {
        const Json* value = lookup(config, key);
        if (value == nullptr) {
          std::vector<std::string> keys;
          for (const auto& [k, v] : config.items()) keys.push_back(k);
          throw tune::ConfigError::at_key(
              key,
              fmt::format("the command argument '{}' names {{{}}}, which the config lacks; its "
                          "keys: {}; write {{{{ and }}}} for literal braces",
                          arg, key, fmt::join(keys, ", ")));
        }
        out += format_value(*value);
      });
  return out;
}

std::optional<ReportLine> parse_report_line(std::string_view line, int64_t line_number) {
  if (!line.starts_with(kReportPrefix)) return std::nullopt;
  std::string_view rest = line.substr(kReportPrefix.size());
  // "@tunerun{" and a bare "@tunerun" are meant as reports too; "@tunerunner" is not.
  if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '{') return std::nullopt;
  auto fail = [&](const std::string& why) {
    const std::string shown = line.size() > kTailLineChars
                                  ? std::string(line.substr(0, kTailLineChars)) + "..."
                                  : std::string(line);
    return tune::TrialError(
        fmt::format("stdout line {}: malformed report `{}`: {}", line_number, shown, why));
  };
  Json metrics;
  try {
    metrics = Json::parse(mark_non_finite(rest));
  } catch (const Json::parse_error& e) {
    throw fail(e.what());
  }
  if (!metrics.is_object()) throw fail("a report must be a JSON object of metrics");
  unmark_non_finite(metrics);
  ReportLine report{std::move(metrics), std::nullopt};
  if (auto it = report.metrics.find("checkpoint"); it != report.metrics.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      throw fail("\"checkpoint\" must be a directory path (a string)");
    }
    report.checkpoint = it->get<std::string>();
    report.metrics.erase(it);
  }
  return report;
}

}  // namespace detail

std::vector<std::string> placeholder_keys(const std::vector<std::string>& argv_template) {
  std::vector<std::string> keys;
  for (const auto& arg : argv_template) {
    scan_placeholders(
        arg, [](std::string_view) {}, [&](const std::string& key) { keys.push_back(key); });
  }
  return keys;
}

void run_external_command(const std::vector<std::string>& argv_template,
                          const tune::Config& config) {
  if (argv_template.empty()) throw tune::Error("an external command trainable needs a command");
  const Context& context = get_context();
  std::vector<std::string> argv;
  for (const auto& arg : argv_template) {
    argv.push_back(detail::fill_placeholders(arg, config.json()));
  }
  CommandProcess command(argv, command_environment(config, context));

  std::deque<std::string> tail;  // the last plain output lines, for an error message
  int64_t line_number = 0, reports = 0;
  while (auto line = command.next_line()) {
    ++line_number;
    auto report_line = detail::parse_report_line(*line, line_number);
    if (!report_line) {
      *line += '\n';
      std::fwrite(line->data(), 1, line->size(), stdout);
      std::fflush(stdout);
      line->pop_back();
      tail.push_back(line->substr(0, kTailLineChars));
      if (tail.size() > kTailLines) tail.pop_front();
      continue;
    }
    std::optional<Checkpoint> checkpoint;
    if (report_line->checkpoint) {
      const auto dir = std::filesystem::absolute(*report_line->checkpoint);
      if (!std::filesystem::is_directory(dir)) {
        throw tune::TrialError(fmt::format("stdout line {}: checkpoint '{}' is not a directory",
                                           line_number, dir.string()));
      }
      checkpoint = Checkpoint::from_directory(dir);
    }
    // Blocks until the controller decides; a stop unwinds from here, and
    // `command`'s destructor terminates the command.
    report(report_line->metrics, std::move(checkpoint));
    ++reports;
  }
  const int status = command.wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string message = fmt::format("the command `{}` {} after {} report(s)", quote_argv(argv),
                                    describe_status(status), reports);
  if (!tail.empty()) message += fmt::format("; its last output: {}", fmt::join(tail, " | "));
  message +=
      fmt::format("; its stderr is in {}/rank_{}.log", context.trial_dir, context.world_rank);
  throw tune::TrialError(message);
}

}  // namespace train
