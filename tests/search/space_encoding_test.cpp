#include "search/internal/space_encoding.h"

#include <doctest/doctest.h>

#include <random>

namespace tune::search::detail {
namespace {

TEST_CASE("suggestion_rng draws what std::seed_seq seeding draws, so seeds keep their configs") {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{42}, uint64_t{0xdeadbeefcafef00d}}) {
    for (uint64_t index : {uint64_t{0}, uint64_t{1}, uint64_t{999}, uint64_t{1} << 40}) {
      std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                        static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32)};
      std::mt19937_64 expected(seq);
      Rng actual = suggestion_rng(seed, index);
      for (int i = 0; i < 400; ++i) REQUIRE(actual() == expected());
    }
  }
}

}  // namespace
}  // namespace tune::search::detail
