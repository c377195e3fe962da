// PBT traces: which trials exploit, which donate, and what explore does.
#include "schedulers/internal/pbt.h"

#include <doctest/doctest.h>

#include "schedulers/internal/mutations.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

const Json kMutations = Json::parse(R"({
  "lr": {"loguniform": [1e-4, 1e-1]},
  "momentum": [0.8, 0.9, 0.99],
  "batch": {"randint": [16, 256]},
  "opt": {"beta": [0.9, 0.99, 0.999]}
})");

Json config(double lr) {
  return {{"lr", lr}, {"momentum", 0.9}, {"batch", 64}, {"opt", {{"beta", 0.99}}}, {"other", "x"}};
}

PbtScheduler pbt(bool synch = false, Mode mode = Mode::kMax, uint64_t seed = 0) {
  PbtScheduler s({.time_attr = "training_iteration",
                  .perturbation_interval = 2,
                  .hyperparam_mutations = kMutations,
                  .synch = synch,
                  .seed = seed});
  s.set_search_properties("score", mode);
  return s;
}

}  // namespace

TEST_CASE("PBT quantiles: ceil(n * 0.25) worst exploit the as many best, at most n / 2") {
  PbtScheduler s = pbt();
  Trace t(s);
  const std::vector<std::string> ids{"a", "b", "c", "d", "e", "f"};
  for (const auto& id : ids) t.add(id, config(0.01)), t.choose({id});
  for (const auto& id : ids) CHECK(t.report(id, 1, 0) == kContinue);  // before the interval
  CHECK(t.report("a", 2, 4) == kContinue);                            // alone scored: no quantiles
  CHECK(s.quantiles().first.empty());
  // b scores 3: ranking {b 3, a 4}: ceil(2 * .25) = 1 each side.
  CHECK(t.report("b", 2, 3) == kPause);
  auto exploit = s.take_exploit("b");
  REQUIRE(exploit);
  CHECK(exploit->donor_id == "a");
  CHECK(!s.take_exploit("b"));  // handed out once
  // c scores 5: {b 3, a 4, c 5}: bottom b (paused), top c.
  CHECK(t.report("c", 2, 5) == kPause);  // not exploited, but b waits: time-multiplex
  CHECK(!s.take_exploit("c"));
  auto q = s.quantiles();
  CHECK(q.first == std::vector<std::string>{"b"});
  CHECK(q.second == std::vector<std::string>{"c"});
  // d scores 1: {d 1, b 3, a 4, c 5}: ceil(4 * .25) = 1; d exploits c.
  CHECK(t.report("d", 2, 1) == kPause);
  CHECK(s.take_exploit("d")->donor_id == "c");
  // e and f: six scored, ceil(1.5) = 2 per side: bottom {d, e}, top {a? no: c, f}.
  CHECK(t.report("e", 2, 2) == kPause);  // {d 1, e 2, b 3, a 4, c 5}: bottom 2: d, e
  const auto donor_e = s.take_exploit("e")->donor_id;
  CHECK((donor_e == "a" || donor_e == "c"));
  CHECK(t.report("f", 2, 6) == kPause);  // top; others wait
  q = s.quantiles();
  CHECK(q.first == std::vector<std::string>{"d", "e"});
  CHECK(q.second == std::vector<std::string>{"c", "f"});
}

TEST_CASE("PBT mode min ranks by the negated metric and needs a donor with a checkpoint") {
  PbtScheduler s = pbt(false, Mode::kMin);
  Trace t(s);
  for (auto id : {"a", "b"}) t.add(id, config(0.01)), t.choose({id});
  CHECK(t.report("a", 2, 1.0, /*checkpoint=*/0) == kContinue);  // no checkpoint yet
  CHECK(t.report("b", 2, 3.0) == kContinue);  // worst, but the donor a has no checkpoint
  CHECK(!s.take_exploit("b"));
  CHECK(t.report("a", 4, 0.5, 4) == kContinue);
  CHECK(t.report("b", 4, 2.0) == kPause);  // worse loss: exploits a
  auto e = s.take_exploit("b");
  REQUIRE(e);
  CHECK(e->donor_id == "a");
  CHECK(e->new_config["other"] == "x");  // unmutated keys come from the donor
  // The recipient takes the donor's perturbation time: next point at 4 + 2.
  t.set_config("b", e->new_config);
  CHECK(t.choose({"b"}) == "b");
  CHECK(t.report("b", 5, 0.1) == kContinue);
}

TEST_CASE("PBT explore stays within the perturbation factors or the domain") {
  const auto mutations = detail::parse_mutations(kMutations, "hyperparam_mutations");
  Rng rng(7);
  const Json base = config(0.01);
  int resampled = 0, perturbed = 0, shifted = 0;
  for (int i = 0; i < 2000; ++i) {
    const Json c = detail::explore(base, mutations, {0.25, {1.2, 0.8}}, rng);
    const double lr = c["lr"].get<double>();
    if (lr == doctest::Approx(0.012) || lr == doctest::Approx(0.008)) {
      ++perturbed;
    } else {
      CHECK(lr >= 1e-4);
      CHECK(lr < 1e-1);
      ++resampled;
    }
    const double m = c["momentum"].get<double>();
    CHECK((m == 0.8 || m == 0.9 || m == 0.99));
    shifted += m != 0.9;
    CHECK(c["batch"].is_number_integer());  // int stays int: int(64 * 1.2) = 76
    const int64_t batch = c["batch"].get<int64_t>();
    CHECK((batch == 76 || batch == 51 || (batch >= 16 && batch < 256)));
    const double beta = c["opt"]["beta"].get<double>();
    CHECK((beta == 0.9 || beta == 0.99 || beta == 0.999));  // nested
    CHECK(c["other"] == "x");
  }
  // Resample with probability 0.25; otherwise a factor or a neighbour.
  CHECK(resampled > 400);
  CHECK(resampled < 600);
  CHECK(perturbed > 1400);
  CHECK(shifted > 1400);  // shifts always move 0.9; resamples keep it a third of the time
}

TEST_CASE("PBT explore shifts a list value to a neighbour, clamped at the ends") {
  const auto mutations =
      detail::parse_mutations(Json::parse(R"({"m": [1, 2, 3]})"), "hyperparam_mutations");
  Rng rng(3);
  for (int i = 0; i < 200; ++i) {
    const Json c = detail::explore({{"m", 1}}, mutations, {0.0, {1.2, 0.8}}, rng);
    CHECK((c["m"] == 1 || c["m"] == 2));
    const Json missing = detail::explore({{"n", 1}}, mutations, {0.0, {1.2, 0.8}}, rng);
    CHECK((missing["m"] == 1 || missing["m"] == 2 || missing["m"] == 3));  // drawn
  }
}

TEST_CASE("PBT custom_explore_fn runs after the mutations") {
  PbtScheduler s({.time_attr = "training_iteration",
                  .perturbation_interval = 1,
                  .custom_explore_fn = [](Json c) {
                    c["lr"] = 0.5;
                    return c;
                  }});
  s.set_search_properties("score", Mode::kMax);
  Trace t(s);
  for (auto id : {"a", "b"}) t.add(id, {{"lr", 0.1}}), t.choose({id});
  CHECK(t.report("a", 1, 2) == kContinue);
  CHECK(t.report("b", 1, 1) == kPause);
  CHECK(s.take_exploit("b")->new_config == Json{{"lr", 0.5}});
}

TEST_CASE("PBT synch waits for all trials, then exploits and resumes exploiters first") {
  PbtScheduler s = pbt(/*synch=*/true);
  Trace t(s);
  for (auto id : {"a", "b", "c", "d"}) t.add(id, config(0.01)), t.choose({id});
  CHECK(t.report("a", 1, 0) == kContinue);
  CHECK(t.report("a", 2, 1) == kPause);  // waits for b, c, d
  CHECK(t.report("b", 2, 4) == kPause);
  CHECK(t.report("c", 2, 3) == kPause);
  CHECK(!s.take_exploit("a"));               // not decided yet
  CHECK(t.choose({"a", "b", "c"}).empty());  // all at the sync point
  CHECK(t.report("d", 2, 2) == kPause);      // last: {a 1, d 2, c 3, b 4}: a exploits b
  CHECK(!s.take_exploit("d"));
  CHECK(t.choose({"b", "c", "d", "a"}) == "a");  // the exploiter resumes first
  auto e = s.take_exploit("a");
  REQUIRE(e);
  CHECK(e->donor_id == "b");
  CHECK(t.choose({"b", "c", "d"}) == "b");
  CHECK(t.report("b", 3, 5) == kContinue);
  CHECK(t.report("b", 4, 5) == kPause);  // the next sync point, 4
}

TEST_CASE("PBT save and restore continue with identical decisions and exploits") {
  PbtScheduler s1 = pbt(false, Mode::kMax, 11), s2 = pbt(false, Mode::kMax, 11);
  Trace t1(s1), t2(s2);
  const std::vector<std::string> ids{"a", "b", "c", "d", "e", "f", "g", "h"};
  for (const auto& id : ids) {
    t1.add(id, config(0.01)), t2.add(id, config(0.01));
    t1.choose({id}), t2.choose({id});
  }
  auto value = [](size_t i, int step) { return std::cos(double(i) * 2.1) * step; };
  for (size_t i = 0; i < 4; ++i) t1.report(ids[i], 2, value(i, 2));
  round_trip(s1, s2);
  for (int step = 2; step <= 6; step += 2) {
    for (size_t i = step == 2 ? 4 : 0; i < ids.size(); ++i) {
      const Decision d1 = t1.report(ids[i], step, value(i, step));
      CHECK(d1 == t2.report(ids[i], step, value(i, step)));
      auto e1 = s1.take_exploit(ids[i]);
      auto e2 = s2.take_exploit(ids[i]);
      CHECK(e1.has_value() == e2.has_value());
      if (e1 && e2) {
        CHECK(e1->donor_id == e2->donor_id);
        CHECK(e1->new_config == e2->new_config);
      }
    }
  }
  CHECK(s1.save() == s2.save());
}

TEST_CASE("PBT leases a trial up to its next perturbation point, and never decides inside one") {
  PbtScheduler s = pbt();  // perturbation_interval 2
  Trace t(s);
  t.add("a");
  // Nothing is decided before iteration 2, then every 2 iterations.
  CHECK(s.continues_through(t.view("a"), 0) == 1);
  CHECK(t.report("a", 1, 1.0) == kContinue);
  CHECK(t.report("a", 2, 1.0) == kContinue);  // a perturbation point
  CHECK(s.continues_through(t.view("a"), 2) == 3);
  CHECK(s.continues_through(t.view("a"), 3) == 3);
  // burn_in_period holds the first point back.
  PbtScheduler late({.time_attr = "training_iteration",
                     .perturbation_interval = 2,
                     .burn_in_period = 5,
                     .hyperparam_mutations = kMutations});
  late.set_search_properties("score", Mode::kMax);
  Trace tl(late);
  tl.add("a");
  CHECK(late.continues_through(tl.view("a"), 0) == 4);
  // Another time_attr (Ray's default, time_total_s): no lease.
  PbtScheduler timed({.perturbation_interval = 2, .hyperparam_mutations = kMutations});
  timed.set_search_properties("score", Mode::kMax);
  Trace tt(timed, "time_total_s");
  tt.add("a");
  CHECK(timed.continues_through(tt.view("a"), 0) == 0);

  // A population twice the slots, time-multiplexed, exploiting: no decision
  // other than kContinue ever falls within a lease, asynchronous or synch.
  for (bool synch : {false, true}) {
    INFO("synch = ", synch);
    PbtScheduler p({.time_attr = "training_iteration",
                    .perturbation_interval = 4,
                    .hyperparam_mutations = kMutations,
                    .synch = synch,
                    .seed = 3});
    p.set_search_properties("score", Mode::kMax);
    const LeaseCheck check = check_leases(p, 16, 40, 4);
    CHECK(check.pauses > 20);
    CHECK(check.exploits > 5);
    CHECK(check.inside_lease == 0);
  }
}
