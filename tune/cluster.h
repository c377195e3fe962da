// ClusterSpec: the cluster settings of an experiment, the same for every
// front end.
#pragma once

#include <filesystem>
#include <string>

namespace tune {

// Where the ranks run: [cluster] in a sweep file, RunConfig::cluster in C++,
// RunConfig(cluster=...) or tunerun.init(...) in Python; the CLI's --launcher
// and --control-address override it. tune/launch/make_launcher.h turns it
// into the launcher for every front end.
struct ClusterSpec {
  // local | slurm | auto: slurm when SLURM_JOB_ID is set | sim: simulated
  // ranks on simulated nodes ([simulation], tune/launch/sim/launcher.h) |
  // ssh: the hosts of `hostfile`, reached by OpenSSH (tune/launch/ssh/launcher.h)
  std::string launcher = "auto";
  std::string control_address;    // the IPv4 address ranks reach the controller at
  std::string control_interface;  // or the interface whose IPv4 address that is
  // Launcher slurm: how often Slurm's node states are read (sinfo) while
  // trials wait or a node is suspected.
  double slurm_poll_s = 30;
  // Launcher ssh: the hosts, one a line with its CPUs and GPUs
  // (tune/spec/hostfile.h); a sweep file's relative path is relative
  // to the sweep file.
  std::filesystem::path hostfile;
  std::filesystem::path ssh_config;  // given to every ssh it runs (ssh -F); empty: ssh's own
  double ssh_retry_s = 10;           // seconds between tries to reach a lost host again
  int ssh_retire_after = 2;          // the failure that retires a host (as Slurm's nodes); 0: none
  // Launcher slurm: how long trials may wait while no node that is up and
  // in the allocation can hold their group, before every trial pauses and
  // the run exits resumable.
  double node_wait_s = 60;
  // Launcher slurm: seconds before the allocation's time limit at which
  // every trial pauses and the run exits resumable; 0: only on SIGTERM.
  double end_margin_s = 120;
};

}  // namespace tune
