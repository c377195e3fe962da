// The hostfile of the SSH launcher (tune/launch/ssh/launcher.h): the machines
// ranks run on, one a line, as DeepSpeed's and Horovod's launchers take them:
//
//   # comments and blank lines are skipped
//   gpu-box-1 slots=4 gpus=4     DeepSpeed's form: slots=N is N CPUs here
//   10.0.0.7 cpus=16 gpus=2      the CPUs and GPUs ranks may hold there
//   alice@lab-3:8                Horovod's HOST:N (N CPUs)
//   worker-0.trainers            a host alone: 1 CPU, no GPU
//
// HOST is what ssh is given (a name ~/.ssh/config or the ssh_config file
// may alias, user@host, an address); a host's name for `tunerun status`
// and the placements is HOST without its user. cpus= wins over slots=.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tune/spec/experiment.h"

namespace tune {

struct SshHost {
  std::string destination;  // as ssh takes it: "alice@lab-3"
  std::string name;         // "lab-3"
  int cpus = 1;
  int gpus = 0;
};

// The hosts of `text`. Throws ConfigError naming `source`, the line and
// what is wrong (an unknown key, a count that is not a number, a host named
// twice, no host at all).
std::vector<SshHost> parse_hostfile(std::string_view text, const std::string& source);

// The hosts of file `path`. Throws ConfigError keyed "cluster.hostfile"
// when it cannot be read, or as parse_hostfile.
std::vector<SshHost> read_hostfile(const std::filesystem::path& path);

// With launcher "ssh": throws ConfigError keyed "cluster.hostfile" when no
// hostfile is set. Looks at the spec alone (finish_spec calls it); that the
// hosts can reach the controller's address (never loopback) is
// check_control_address's (tune/launch/make_launcher.h), which resolves
// interfaces.
void check_ssh_cluster(const ExperimentSpec& spec);

}  // namespace tune
