// The curve families (train/builtins/curve_families.h) give the values
// benchmarks/multi_fidelity printed before they moved there, and read
// their parameters from a config, naming the key that is wrong.
#include "train/builtins/curve_families.h"

#include <doctest/doctest.h>

using namespace tune;
using tune::sim::CurveFamily;

namespace {

sim::FamilyPoint point(double lr, double momentum, int64_t layers, double dropout) {
  return sim::FamilyPoint::from_config(
      Config({{"lr", lr}, {"momentum", momentum}, {"layers", layers}, {"dropout", dropout}}));
}

}  // namespace

TEST_CASE("the families give the multi_fidelity benchmark's accuracies") {
  // The benchmark's formula before it moved, evaluated apart (Python).
  const auto best = point(1e-2, 0.9, 5, 0.25);
  CHECK(sim::family_accuracy(CurveFamily::kCrossing, best, 1) ==
        doctest::Approx(0.03968079026741395).epsilon(1e-12));
  CHECK(sim::family_accuracy(CurveFamily::kCrossing, best, 81) ==
        doctest::Approx(0.9200220538018824).epsilon(1e-12));
  CHECK(sim::family_accuracy(CurveFamily::kFaithful, best, 1) ==
        doctest::Approx(0.07303947093269603).epsilon(1e-12));
  CHECK(sim::family_accuracy(CurveFamily::kFaithful, best, 81) ==
        doctest::Approx(0.9485428798546417).epsilon(1e-12));
  const auto fast = point(0.3, 0.5, 2, 0.5);
  CHECK(sim::family_accuracy(CurveFamily::kCrossing, fast, 3) ==
        doctest::Approx(0.14974831528586496).epsilon(1e-12));
  CHECK(sim::family_accuracy(CurveFamily::kFaithful, fast, 3) ==
        doctest::Approx(0.04292248172918941).epsilon(1e-12));
  // Crossing: the fast learner leads early, the best region wins at the end.
  CHECK(sim::family_accuracy(CurveFamily::kCrossing, fast, 3) >
        sim::family_accuracy(CurveFamily::kCrossing, best, 3));
}

TEST_CASE("a family's parameters come from the config; a missing or bad one names its key") {
  CHECK(sim::curve_family_from_string("crossing") == CurveFamily::kCrossing);
  CHECK(sim::curve_family_from_string("faithful") == CurveFamily::kFaithful);
  CHECK_FALSE(sim::curve_family_from_string("table"));
  try {
    sim::FamilyPoint::from_config(Config({{"lr", 0.01}, {"momentum", 0.9}, {"dropout", 0.1}}));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "layers");
  }
  try {
    point(0, 0.9, 5, 0.25);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "lr");
  }
}
