// The domains beyond uniform/loguniform/randint/choice: quantized, normal,
// log-integer and conditional ones, and their spec form.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "core/errors.h"
#include "search/domain.h"
#include "search/domain_spec.h"
#include "search/param_space.h"
#include "tests/search/config_error.h"

namespace tune {
namespace {

bool is_multiple(double v, double q) { return std::abs(v / q - std::round(v / q)) < 1e-9; }

TEST_CASE("quniform draws are multiples of q within the inclusive bounds") {
  Rng rng(3);
  const Domain d = quniform(0, 1, 0.25);
  std::set<double> seen;
  for (int i = 0; i < 5000; ++i) {
    const double v = d.sample(rng).get<double>();
    CHECK((v >= 0 && v <= 1));
    CHECK(is_multiple(v, 0.25));
    seen.insert(v);
  }
  CHECK(seen == std::set<double>{0, 0.25, 0.5, 0.75, 1});
}

TEST_CASE("qloguniform is log-spaced and quantized") {
  Rng rng(4);
  const Domain d = qloguniform(1, 1000, 1);
  int below_10 = 0;
  for (int i = 0; i < 6000; ++i) {
    const double v = d.sample(rng).get<double>();
    CHECK((v >= 1 && v <= 1000));
    CHECK(is_multiple(v, 1));
    below_10 += v < 10;
  }
  // A third of the log range lies below 10.
  CHECK(std::abs(below_10 / 6000.0 - 1.0 / 3) < 0.05);
}

TEST_CASE("randn has the given mean and sd, qrandn rounds to q") {
  Rng rng(5);
  const Domain d = randn(3, 2);
  double sum = 0, sq = 0;
  constexpr int kN = 20000;
  for (int i = 0; i < kN; ++i) {
    const double v = d.sample(rng).get<double>();
    sum += v;
    sq += v * v;
  }
  const double mean = sum / kN;
  CHECK(std::abs(mean - 3) < 0.06);
  CHECK(std::abs(std::sqrt(sq / kN - mean * mean) - 2) < 0.06);
  const Domain q = qrandn(0, 1, 0.5);
  for (int i = 0; i < 100; ++i) CHECK(is_multiple(q.sample(rng).get<double>(), 0.5));
}

TEST_CASE("qrandint is upper-inclusive, lograndint upper-exclusive, qlograndint inclusive") {
  Rng rng(6);
  std::set<int64_t> q, log, qlog;
  for (int i = 0; i < 4000; ++i) {
    q.insert(qrandint(0, 10, 5).sample(rng).get<int64_t>());
    log.insert(lograndint(1, 4).sample(rng).get<int64_t>());
    qlog.insert(qlograndint(2, 8, 2).sample(rng).get<int64_t>());
  }
  CHECK(q == std::set<int64_t>{0, 5, 10});
  CHECK(log == std::set<int64_t>{1, 2, 3});
  CHECK(qlog == std::set<int64_t>{2, 4, 6, 8});
  CHECK(qrandint(0, 10, 5).sample(rng).is_number_integer());
}

TEST_CASE("integer q kinds take any bounds and draw the multiples of q inside them") {
  // Ray's own examples: qrandint(-21, 12, 3) and qlograndint(1, 10, 2).
  Rng rng(8);
  std::set<int64_t> q, qlog;
  for (int i = 0; i < 4000; ++i) {
    q.insert(qrandint(-20, 13, 3).sample(rng).get<int64_t>());
    qlog.insert(qlograndint(1, 10, 2).sample(rng).get<int64_t>());
  }
  CHECK(q == std::set<int64_t>{-18, -15, -12, -9, -6, -3, 0, 3, 6, 9, 12});
  CHECK(qlog == std::set<int64_t>{2, 4, 6, 8, 10});
  CHECK(qlograndint(1, 10, 2).describe() == "qlograndint(2, 10, 2)");
}

TEST_CASE("lograndint favours small values like a log scale") {
  Rng rng(7);
  int below_10 = 0;
  for (int i = 0; i < 6000; ++i) below_10 += lograndint(1, 1000).sample(rng).get<int64_t>() < 10;
  CHECK(std::abs(below_10 / 6000.0 - 1.0 / 3) < 0.05);
}

TEST_CASE("bad bounds and q values are rejected with what is wrong") {
  CHECK(config_error([] { quniform(0, 1, 0.3); }).find("multiples of q") != std::string::npos);
  CHECK(config_error([] { quniform(0, 1, 0); }).find("q > 0") != std::string::npos);
  CHECK(config_error([] { qloguniform(0, 1, 0.1); }).find("0 < lower") != std::string::npos);
  CHECK(config_error([] { qrandint(1, 3, 2); }).find("only one multiple of 2") !=
        std::string::npos);
  CHECK(config_error([] { lograndint(0, 10); }).find("1 <= lower") != std::string::npos);
  CHECK(config_error([] { qlograndint(5, 7, 4); }).find("no multiple of 4") != std::string::npos);
  CHECK(config_error([] { qrandint(0, 10, 0); }).find("q >= 1") != std::string::npos);
  CHECK(config_error([] { randn(0, 0); }).find("sd > 0") != std::string::npos);
  CHECK(config_error([] { qrandn(0, 1, -1); }).find("q > 0") != std::string::npos);
  CHECK(config_error([] { sample_from(nullptr); }).find("function") != std::string::npos);
}

TEST_CASE("snap moves a value onto the lattice and into the bounds") {
  CHECK(quniform(0, 1, 0.25).snap(0.3).get<double>() == 0.25);
  CHECK(quniform(0, 1, 0.25).snap(1.7).get<double>() == 1.0);
  CHECK(randint(0, 10).snap(9.7).get<int64_t>() == 9);
  CHECK(randint(0, 10).snap(-3).get<int64_t>() == 0);
  CHECK(qrandint(0, 10, 5).snap(7.6).get<int64_t>() == 10);
  CHECK(uniform(0, 1).snap(1.5).get<double>() < 1.0);
}

TEST_CASE("every kind has a spec form that round-trips through describe") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"quniform": [0, 1, 0.5]})", "quniform(0, 1, 0.5)"},
      {R"({"qloguniform": [1, 100, 1]})", "qloguniform(1, 100, 1)"},
      {R"({"randn": [1, 2]})", "randn(1, 2)"},
      {R"({"randn": []})", "randn(0, 1)"},
      {R"({"qrandn": [0, 1, 0.1]})", "qrandn(0, 1, 0.1)"},
      {R"({"qrandint": [0, 10, 2]})", "qrandint(0, 10, 2)"},
      {R"({"lograndint": [1, 100]})", "lograndint(1, 100)"},
      {R"({"qlograndint": [2, 64, 2]})", "qlograndint(2, 64, 2)"},
  };
  for (const auto& [spec, text] : cases) {
    CAPTURE(spec);
    CHECK(domain_from_spec(Json::parse(spec)).describe() == text);
  }
}

TEST_CASE("spec errors name the form") {
  CHECK(config_error([] {
          domain_from_spec(Json::parse(R"({"quniform": [0, 1]})"));
        }).find("[lower, upper, q]") != std::string::npos);
  CHECK(config_error([] {
          domain_from_spec(Json::parse(R"({"qrandint": [0, 10, 2.5]})"));
        }).find("integers") != std::string::npos);
  CHECK(config_error([] {
          domain_from_spec(Json::parse(R"({"quniform": [0, 1, 0.3]})"));
        }).find("multiples of q") != std::string::npos);
}

TEST_CASE("sample_from values are computed from the resolved config, nested ones too") {
  const ParamSpace space{
      {"doubled", sample_from([](const Json& c) { return c["x"].get<int64_t>() * 2; })},
      {"x", randint(0, 100)},
      {"model",
       ParamSpace{{"width", choice({8, 16})}, {"half", sample_from([](const Json& c) {
                                                 return c["model"]["width"].get<int64_t>() / 2;
                                               })}}},
      {"sum", sample_from([](const Json& c) { return c["doubled"].get<int64_t>() + 1; })}};
  Rng rng(1);
  for (int i = 0; i < 20; ++i) {
    const Json c = space.resolve(0, rng);
    CHECK(c["doubled"] == 2 * c["x"].get<int64_t>());
    CHECK(c["model"]["half"] == c["model"]["width"].get<int64_t>() / 2);
    CHECK(c["sum"] == c["doubled"].get<int64_t>() + 1);
  }
  CHECK(space.searchable_domains().size() == 2);
  CHECK(space.describe()["doubled"] == "sample_from(<function>)");
}

}  // namespace
}  // namespace tune
