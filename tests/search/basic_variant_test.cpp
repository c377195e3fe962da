#include "search/internal/basic_variant.h"

#include <doctest/doctest.h>

#include <set>

#include "core/errors.h"

namespace tune::search {
namespace {

using Status = Suggestion::Status;

const ParamSpace kGridSpace{{"a", grid_search({1, 2, 3})},
                            {"lr", loguniform(1e-4, 1e-1)},
                            {"model", ParamSpace{{"width", choice({64, 128, 256})}}}};

BasicVariantOptions with_samples(int64_t num_samples, uint64_t seed = 0) {
  BasicVariantOptions out;
  out.num_samples = num_samples;
  out.seed = seed;
  return out;
}

BasicVariantGenerator make(BasicVariantOptions options, const ParamSpace& space = kGridSpace) {
  BasicVariantGenerator searcher(std::move(options));
  searcher.set_search_properties("loss", Mode::kMin, space);
  return searcher;
}

// Every config until kFinished (at most `limit`).
std::vector<Json> drain(BasicVariantGenerator& searcher, int limit = 1000) {
  std::vector<Json> out;
  for (int i = 0; i < limit; ++i) {
    Suggestion s = searcher.suggest("t" + std::to_string(i));
    if (s.status == Status::kFinished) break;
    REQUIRE(s.status == Status::kConfig);
    out.push_back(std::move(s.config));
  }
  return out;
}

TEST_CASE("grid x num_samples configs, each repeat covering every cell once") {
  auto searcher = make(with_samples(2, 1));
  CHECK(searcher.total_trials() == 6);
  const auto configs = drain(searcher);
  REQUIRE(configs.size() == 6);
  for (int repeat = 0; repeat < 2; ++repeat) {
    for (int cell = 0; cell < 3; ++cell) CHECK(configs[repeat * 3 + cell]["a"] == cell + 1);
  }
  // Fresh draws per repeat.
  CHECK(configs[0]["lr"] != configs[3]["lr"]);
  CHECK(searcher.suggest("late").status == Status::kFinished);
}

TEST_CASE("the same seed gives identical configs and a different seed different ones") {
  auto a = make(with_samples(4, 7));
  auto b = make(with_samples(4, 7));
  auto c = make(with_samples(4, 8));
  const auto from_a = drain(a);
  CHECK(from_a == drain(b));
  CHECK(from_a != drain(c));
}

TEST_CASE("config i draws from a seed_seq of the seed and i, so a restore needs only i") {
  // Pins the documented seeding: mt19937_64(seed_seq{lo32(seed), hi32(seed), lo32(i), hi32(i)}).
  const ParamSpace space{{"x", uniform(0, 1)}};
  auto searcher = make(with_samples(3, 0x100000002), space);
  searcher.suggest("t0");
  std::seed_seq seq{2u, 1u, 1u, 0u};
  Rng reference(seq);
  const double u = static_cast<double>(reference() >> 11) * 0x1.0p-53;
  CHECK(searcher.suggest("t1").config == Json{{"x", u}});
}

TEST_CASE("configs drawn within one run are distinct") {
  auto searcher = make(with_samples(5, 3));
  std::set<double> lrs;
  for (const Json& config : drain(searcher)) lrs.insert(config["lr"].get<double>());
  CHECK(lrs.size() == 15);
}

TEST_CASE("save and restore continue with the same suggestions") {
  auto original = make(with_samples(3, 11));
  drain(original, 4);
  const Json state = original.save();
  CHECK(state == Json{{"next", 4}});
  const auto expected = drain(original);

  auto restored = make(with_samples(3, 11));
  restored.restore(Json::parse(state.dump()));
  CHECK(drain(restored) == expected);
  CHECK(expected.size() == 5);
}

TEST_CASE("restore rejects malformed state") {
  auto searcher = make({});
  CHECK_THROWS_AS(searcher.restore(Json::array()), Error);
  CHECK_THROWS_AS(searcher.restore(Json{{"next", "3"}}), Error);
  CHECK_THROWS_AS(searcher.restore(Json{{"next", -1}}), Error);
  CHECK_THROWS_AS(searcher.restore(Json::object()), Error);
}

TEST_CASE("points_to_evaluate come first and partial points are filled in") {
  BasicVariantOptions options = with_samples(1, 5);
  options.points_to_evaluate = {Json{{"a", 10}, {"lr", 0.5}, {"model", {{"width", 999}}}},
                                Json{{"lr", 0.25}}};
  auto searcher = make(options);
  CHECK(searcher.total_trials() == 5);
  const auto configs = drain(searcher);
  REQUIRE(configs.size() == 5);
  CHECK(configs[0] == Json{{"a", 10}, {"lr", 0.5}, {"model", {{"width", 999}}}});
  CHECK(configs[1]["lr"] == 0.25);
  CHECK(configs[1]["a"] == 1);  // grid cell 0
  const int width = configs[1]["model"]["width"].get<int>();
  CHECK((width == 64 || width == 128 || width == 256));
  for (int cell = 0; cell < 3; ++cell) CHECK(configs[2 + cell]["a"] == cell + 1);
}

TEST_CASE("a point's nested table merges key by key") {
  const ParamSpace space{{"model", ParamSpace{{"width", choice({64, 128})}, {"depth", 3}}}};
  BasicVariantOptions options;
  options.points_to_evaluate = {Json{{"model", {{"width", 32}}}}};
  auto searcher = make(options, space);
  const auto configs = drain(searcher);
  REQUIRE(configs.size() == 2);
  CHECK(configs[0] == Json{{"model", {{"width", 32}, {"depth", 3}}}});
}

TEST_CASE("num_samples = -1 suggests without end") {
  auto searcher = make(with_samples(-1));
  CHECK(searcher.total_trials() == -1);
  const auto configs = drain(searcher, 50);
  CHECK(configs.size() == 50);
  CHECK(configs[49]["a"] == 49 % 3 + 1);
}

TEST_CASE("invalid options throw ConfigError naming the option") {
  try {
    BasicVariantGenerator searcher(with_samples(0));
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "num_samples");
  }
  BasicVariantOptions options;
  options.points_to_evaluate = {Json(3)};
  try {
    BasicVariantGenerator searcher(options);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "points_to_evaluate");
  }
}

}  // namespace
}  // namespace tune::search
