// `tunerun dashboard` and `tunerun report` run in a program of their own,
// tunerun-dashboard, beside tunerun as tunerun-worker is (git runs its
// subcommands so): a sweep never needs the dashboard's web server, page and
// importance model, so the first `scripts/tunerun SWEEP.toml` does not
// compile them. tunerun parses and checks the options (its --help lists
// both commands), then replaces itself with the program.
#pragma once

#include <string>
#include <vector>

namespace tune::cli {

// The environment variable that holds the dashboard's token: `tunerun
// dashboard` reads it from the user and hands it to tunerun-dashboard in it.
inline constexpr const char* kDashboardTokenVariable = "TUNERUN_DASHBOARD_TOKEN";

// Replaces this process with tunerun-dashboard, its arguments `args`
// (dashboard_main.cpp reads them). Where the build lacks the program, or
// exec fails, prints what and where it looked and throws ExitRequest.
[[noreturn]] void exec_dashboard_program(const std::string& command,
                                         const std::vector<std::string>& args);

}  // namespace tune::cli
