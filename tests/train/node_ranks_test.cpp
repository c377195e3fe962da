#include "train/node_ranks.h"

#include <doctest/doctest.h>

#include <vector>

#include "core/errors.h"

using train::node_ranks;

namespace {

std::vector<int> fields(const train::NodeRanks& r) {
  return {r.local_rank, r.local_world_size, r.node_rank, r.num_nodes};
}

}  // namespace

TEST_CASE("without hosts every rank is on one host: local rank is the rank") {
  CHECK(fields(node_ranks("", 2, 4)) == std::vector<int>{2, 4, 0, 1});
}

TEST_CASE("ranks spread over hosts count locally, nodes in order of their first rank") {
  const char* hosts = "n2,n2,n1,n2";
  CHECK(fields(node_ranks(hosts, 0, 4)) == std::vector<int>{0, 3, 0, 2});
  CHECK(fields(node_ranks(hosts, 1, 4)) == std::vector<int>{1, 3, 0, 2});
  CHECK(fields(node_ranks(hosts, 2, 4)) == std::vector<int>{0, 1, 1, 2});
  CHECK(fields(node_ranks(hosts, 3, 4)) == std::vector<int>{2, 3, 0, 2});
  CHECK(fields(node_ranks("n1,n2", 1, 2)) == std::vector<int>{0, 1, 1, 2});
}

TEST_CASE("a hosts list that does not match the group is an error naming it") {
  CHECK_THROWS_WITH_AS(node_ranks("n1,n2", 0, 3), doctest::Contains("'n1,n2' names 2 hosts"),
                       tune::Error);
}
