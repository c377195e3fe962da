// The benchmarks' anchors: the Python baselines in benchmarks/anchors/
// (Optuna, PyTorch DDP), run by Debian's /usr/bin/python3 in the same run as
// the measurement they anchor. The scripts come with the repository; the
// Python packages do not (TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh).
#pragma once

#include <fmt/format.h>

#include <cstdlib>
#include <string>

namespace bench {

// The command that runs anchor `script` (e.g. "optuna_baseline.py") with
// `args`, its environment variables (`env`, "K=V ...") first.
inline std::string anchor_command(const std::string& script, const std::string& args,
                                  const std::string& env = "") {
  return fmt::format("{}{}/usr/bin/python3 '{}/{}' {}", env, env.empty() ? "" : " ",
                     TUNERUN_BENCH_ANCHORS, script, args);
}

// Empty when /usr/bin/python3 can import `module`; otherwise the line to
// print instead of the anchor's numbers, naming the Debian package to install.
inline std::string missing_anchor(const std::string& module, const std::string& package) {
  const std::string probe = fmt::format("/usr/bin/python3 -c 'import {}' >/dev/null 2>&1", module);
  if (std::system(probe.c_str()) == 0) return "";
  return fmt::format(
      "anchor unavailable: /usr/bin/python3 cannot import {}: install {} "
      "(TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh installs it)",
      module, package);
}

}  // namespace bench
