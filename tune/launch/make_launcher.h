// make_launcher: the one place where an experiment's cluster settings
// ([cluster] in a sweep file, RunConfig's cluster in C++ and Python,
// tunerun.init) become the launcher its ranks run under and the address its
// control channel binds. The controller calls it for every front end, so a
// C++ Tuner, a Python Tuner and the CLI inside a Slurm allocation all run
// their ranks as Slurm job steps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tune/launch/launcher.h"
#include "tune/spec/experiment.h"

namespace tune {

// What ClusterSpec::launcher means here: "auto" is "slurm" inside a Slurm
// allocation (SLURM_JOB_ID is set) and "local" elsewhere; the others are
// themselves.
std::string resolve_launcher(const std::string& launcher);

struct LaunchContext {
  // The rank executable: the sim launcher finds its peers' executable
  // (tunerun-sim) beside it.
  std::string worker_argv0;
  // Python only: local ranks whose argv is `worker_argv` are forked from
  // this pre-started interpreter (tune/launch/local/zygote.h). Empty: every
  // rank starts by exec. Ignored by the other launchers, whose ranks start on
  // other nodes or are simulated.
  std::vector<std::string> zygote_argv;
  std::vector<std::string> worker_argv;
  // Folders the SSH launcher looks for tunerun-ssh-rank in before beside
  // worker_argv0 and this executable: Python's module's (bindings/run.cpp),
  // whose interpreter is neither.
  std::vector<std::string> program_dirs;
};

struct LauncherChoice {
  std::shared_ptr<Launcher> launcher;
  std::string kind;             // "local", "slurm", "sim" or "ssh": what "auto" resolved to
  std::string control_address;  // the IPv4 address the control channel binds
};

// The launcher `spec.cluster` asks for. Local and simulated ranks reach the
// controller on 127.0.0.1 unless an address or interface is set; Slurm's
// ranks run on other nodes, so the Slurm launcher needs one they route to.
// The SSH launcher's hosts (cluster.hostfile) are other machines too.
// Throws ConfigError keyed at the cluster setting that cannot take effect:
// "cluster.control_address" for a Slurm or SSH launcher without a reachable
// address (loopback for SSH), "cluster.hostfile" for a hostfile that cannot
// be read, "cluster.control_interface" for an interface with no IPv4
// address here, "cluster.launcher" for "slurm" outside an allocation or a
// simulation whose peers' executable is missing. The curves of a simulation
// are finish_spec's to check (tune/spec/simulation.h), before this runs.
LauncherChoice make_launcher(const ExperimentSpec& spec, const LaunchContext& context);

// Whether `address` names this host only: 127.0.0.0/8, ::1, localhost, or
// the unspecified 0.0.0.0 / ::.
bool loopback_address(const std::string& address);

// A launcher whose ranks run on other nodes (slurm, or "auto" inside an
// allocation; ssh) cannot use a loopback control address: throws
// ConfigError keyed at the setting that gave it (cluster.control_address,
// or cluster.control_interface naming a loopback interface), saying how to
// choose one. `tunerun validate` and make_launcher call it.
void check_control_address(const ExperimentSpec& spec);

// The address the control channel binds for a launcher the caller made
// itself: the settings' address or interface, else 127.0.0.1.
std::string control_address_for(const ExperimentSpec& spec);

// The name of this host's interface with IPv4 address `address`; empty when none has it.
std::string interface_of(const std::string& address);

// The IPv4 address of network interface `name` on this host. Throws
// ConfigError keyed "cluster.control_interface" naming the interfaces that
// have one when `name` has none.
std::string interface_address(const std::string& name);

}  // namespace tune
