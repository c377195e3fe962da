// ClusterSpec: the cluster settings of an experiment, the same for every
// front end.
#pragma once

#include <string>

namespace tune {

// Where the ranks run: [cluster] in a sweep file, RunConfig::cluster in C++,
// RunConfig(cluster=...) or tunerun.init(...) in Python; the CLI's --launcher
// and --control-address override it. tune/launch/make_launcher.h turns it
// into the launcher for every front end.
struct ClusterSpec {
  // local | slurm | auto: slurm when SLURM_JOB_ID is set | sim: simulated
  // ranks on simulated nodes ([simulation], tune/launch/sim/launcher.h)
  std::string launcher = "auto";
  std::string control_address;    // the IPv4 address ranks reach the controller at
  std::string control_interface;  // or the interface whose IPv4 address that is
  // Launcher slurm: how often Slurm's node states are read (sinfo) while
  // trials wait or a node is suspected.
  double slurm_poll_s = 30;
  // Launcher slurm: how long trials may wait while no node that is up and
  // in the allocation can hold their group, before every trial pauses and
  // the run exits resumable.
  double node_wait_s = 60;
  // Launcher slurm: seconds before the allocation's time limit at which
  // every trial pauses and the run exits resumable; 0: only on SIGTERM.
  double end_margin_s = 120;
};

}  // namespace tune
