// The `tunerun` subcommands, one file each (CLI11's subcom_in_files
// pattern): setup_X adds the subcommand and its options to the app and sets
// the callback that runs it. Only `run`, `resume` and `simulate` see the
// controller (run_experiment.h); the commands that read a database do not
// compile it.
//
// Exit codes: 0 success; 1 the experiment ran but some trial ended in ERROR;
// 2 bad input or an environment the user can fix (command line, sweep file,
// missing experiment, paths, permissions, a full disk, a corrupt or foreign
// database); 3 a failure of tunerun itself (a bug); 130 interrupted (SIGINT,
// SIGTERM or fail_fast), resumable with `tunerun resume`.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>

#include "core/errors.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tune::cli {

inline constexpr int kExitTrialErrors = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitInterrupted = 130;

// Thrown by a subcommand callback to end the program with `code` after it
// has printed what the user needs.
struct ExitRequest {
  int code;
};

// Runs a program's body and returns its exit code: 0, an ExitRequest's own,
// kExitBadInput for a ConfigError, a StorageError or a file system error (a
// path, a permission, a full disk), kExitInternal for any other exception;
// the error is printed first. `tunerun` and `tunerun-dashboard` end the same.
template <typename Body>
int exit_code_of(Body&& body) {
  try {
    body();
  } catch (const ExitRequest& request) {
    return request.code;
  } catch (const ConfigError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  } catch (const StorageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "error: {}: {}\n", e.path1().string(), e.code().message());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitInternal;
  }
  return 0;
}

void setup_run(CLI::App& app);
void setup_resume(CLI::App& app);
void setup_results(CLI::App& app);
void setup_validate(CLI::App& app);
void setup_best(CLI::App& app);
void setup_status(CLI::App& app);
void setup_dashboard(CLI::App& app);
void setup_report(CLI::App& app);
void setup_simulate(CLI::App& app);
void setup_keys(CLI::App& app);

}  // namespace tune::cli
