// A rank's place among the nodes of its group, for launchers that start ranks
// on several machines (a Slurm step's tasks): the controller names every
// rank's host, in rank order, in one variable the whole group shares, and
// each rank derives its local rank, the ranks on its host and its node's
// rank from it (torchrun's LOCAL_RANK, LOCAL_WORLD_SIZE and GROUP_RANK).
#pragma once

#include <string_view>

namespace train {

// "n1,n1,n2": ranks 0 and 1 on n1, rank 2 on n2. Unset: every rank on one host.
inline constexpr const char* kEnvRankHosts = "TUNERUN_RANK_HOSTS";

struct NodeRanks {
  int local_rank = 0;        // among the ranks on this host, in rank order
  int local_world_size = 1;  // ranks on this host
  int node_rank = 0;         // this host among the group's, in order of their first rank
  int num_nodes = 1;
};

// Rank `rank`'s place, of `world_size` ranks, from a kEnvRankHosts value;
// empty: all ranks on one host. Throws tune::Error when `hosts` does not
// name exactly `world_size` hosts.
NodeRanks node_ranks(std::string_view hosts, int rank, int world_size);

}  // namespace train
