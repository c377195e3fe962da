#include "train/node_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.h"

namespace train {

NodeRanks node_ranks(std::string_view hosts, int rank, int world_size) {
  if (hosts.empty()) return {rank, world_size, 0, 1};
  std::vector<std::string_view> host_of;
  for (size_t start = 0;;) {
    const size_t comma = hosts.find(',', start);
    host_of.push_back(hosts.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(host_of.size()) != world_size || rank < 0 || rank >= world_size) {
    throw tune::Error(fmt::format("{}='{}' names {} hosts for rank {} of {}", kEnvRankHosts, hosts,
                                  host_of.size(), rank, world_size));
  }
  NodeRanks ranks{0, 0, 0, 0};
  std::vector<std::string_view> nodes;  // in order of their first rank
  for (int r = 0; r < world_size; ++r) {
    if (std::find(nodes.begin(), nodes.end(), host_of[r]) == nodes.end()) {
      nodes.push_back(host_of[r]);
    }
    if (host_of[r] != host_of[rank]) continue;
    ++ranks.local_world_size;
    if (r < rank) ++ranks.local_rank;
  }
  ranks.node_rank =
      static_cast<int>(std::find(nodes.begin(), nodes.end(), host_of[rank]) - nodes.begin());
  ranks.num_nodes = static_cast<int>(nodes.size());
  return ranks;
}

}  // namespace train
