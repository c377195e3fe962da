#include "search/internal/space_encoding.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

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

TEST_CASE("integer and quantized dims know their lattice, others have none") {
  const ParamSpace space{{"a_layers", randint(1, 9)},         // 1..8
                         {"b_width", qrandint(16, 512, 16)},  // 16, 32, ..., 512
                         {"c_drop", quniform(0, 0.5, 0.1)},   // 0, 0.1, ..., 0.5
                         {"d_batch", lograndint(8, 257)},     // 8..256
                         {"e_lr", loguniform(1e-4, 1e-1)},   {"f_shift", qrandn(0, 1, 0.5)},
                         {"g_opt", choice({"adam", "sgd"})}};
  const SpaceEncoding encoding(space);
  std::map<std::string, double> size;
  for (const Dimension& dim : encoding.dims()) size[dim.path] = dim.lattice_size;
  CHECK(size["a_layers"] == 8);
  CHECK(size["b_width"] == 32);
  CHECK(size["c_drop"] == 6);
  CHECK(size["d_batch"] == 249);
  CHECK(size["e_lr"] == 0);
  CHECK(size["f_shift"] == 0);
  CHECK(size["g_opt"] == 0);
}

TEST_CASE("snap gives the point a config decoded from x encodes to") {
  const ParamSpace space{{"a_layers", randint(1, 9)},
                         {"b_width", qrandint(16, 512, 16)},
                         {"c_drop", quniform(0, 0.5, 0.1)},
                         {"d_batch", lograndint(8, 257)},
                         {"e_lr", loguniform(1e-4, 1e-1)},
                         {"f_shift", qrandn(0, 1, 0.5)},
                         {"g_opt", choice({"adam", "sgd", "rmsprop"})},
                         {"h_rate", qloguniform(1e-3, 1, 1e-3)}};
  const SpaceEncoding encoding(space);
  Rng rng = suggestion_rng(7, 0);
  for (int i = 0; i < 200; ++i) {
    std::vector<double> x(encoding.size());
    for (size_t d = 0; d < x.size(); ++d) x[d] = unit(rng);
    x[6] *= 2;  // a categorical's index
    const std::vector<double> snapped = encoding.snap(x);
    const std::vector<double> expected = encoding.encode(encoding.decode(x));
    for (size_t d = 0; d < x.size(); ++d) {
      CAPTURE(d);
      CHECK(snapped[d] == doctest::Approx(expected[d]).epsilon(1e-12));
    }
    CHECK(snapped[4] == x[4]);  // continuous: unchanged
  }
}

}  // namespace
}  // namespace tune::search::detail
