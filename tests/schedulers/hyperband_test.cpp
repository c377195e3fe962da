// HyperBand traces: bracket sizes and milestones as Ray computes them, and
// synchronous halving at each milestone.
#include "schedulers/internal/hyperband.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "schedulers/internal/asha.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

HyperBandScheduler hyperband(double max_t, double rf, Mode mode = Mode::kMax) {
  HyperBandScheduler s({.max_t = max_t, .reduction_factor = rf});
  s.set_search_properties("score", mode);
  return s;
}

// HyperBand as Ray's HyperBandForBOHB (largest bracket first), maximising.
HyperBandScheduler for_bohb(double max_t, double rf) {
  HyperBandScheduler s({.max_t = max_t, .reduction_factor = rf, .for_bohb = true});
  s.set_search_properties("score", Mode::kMax);
  return s;
}

// max_t=81, rf=3: adds 144 trials, one more than a band holds, and checks
// that they filled brackets `s_order` of band 0 in that order, each with
// n0(s) trials from milestone r0(s), and opened band 1 with the first again.
void check_first_band(bool for_bohb, const std::vector<int64_t>& s_order) {
  CAPTURE(for_bohb);
  HyperBandScheduler s({.max_t = 81, .reduction_factor = 3, .for_bohb = for_bohb});
  s.set_search_properties("score", Mode::kMax);
  Trace t(s);
  for (int i = 0; i < 144; ++i) t.add("t" + std::to_string(i));
  const auto b = s.brackets();
  REQUIRE(b.size() == 6);
  const std::vector<int64_t> n0{5, 8, 15, 34, 81}, r0{81, 27, 9, 3, 1};  // by s
  for (size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    const auto si = static_cast<size_t>(s_order[i]);
    CHECK(b[i].band == 0);
    CHECK(b[i].s == s_order[i]);
    CHECK(b[i].n0 == n0[si]);
    CHECK(b[i].r0 == r0[si]);
    CHECK(b[i].milestone == static_cast<double>(r0[si]));
    CHECK(b[i].live == static_cast<size_t>(n0[si]));
  }
  CHECK(b[5].band == 1);  // the 144th trial opens a new band
  CHECK(b[5].s == s_order[0]);
  CHECK(b[5].live == 1);
}

}  // namespace

TEST_CASE("HyperBand max_t=81 rf=3: brackets of 5, 8, 15, 34, 81 trials from milestones 81..1") {
  check_first_band(false, {0, 1, 2, 3, 4});
}

TEST_CASE("HyperBand for_bohb max_t=81 rf=3: the largest bracket opens first, 81 trials from 1") {
  check_first_band(true, {4, 3, 2, 1, 0});  // as Ray's HyperBandForBOHB and BOHB
}

TEST_CASE("HyperBand for_bohb skips a largest bracket whose first milestone rounds to 0") {
  // max_t=3, rf=2: s_max = round(log2(3)) = 2, but int(3 / 4) = 0 ("Bracket
  // too small", skipped as Ray's does); then s=1 (3 trials from 1), s=0 (3 at 3).
  HyperBandScheduler s = for_bohb(3, 2);
  Trace t(s);
  for (int i = 0; i < 7; ++i) t.add("t" + std::to_string(i));
  const auto b = s.brackets();
  REQUIRE(b.size() == 3);
  CHECK(b[0].s == 1);
  CHECK(b[0].r0 == 1);
  CHECK(b[0].live == 3);
  CHECK(b[1].s == 0);
  CHECK(b[1].r0 == 3);
  CHECK(b[1].live == 3);
  CHECK(b[2].band == 1);
  CHECK(b[2].s == 1);
  CHECK(b[2].live == 1);
}

TEST_CASE("HyperBand milestones grow by rf up to max_t (Ray after #39157)") {
  // Bracket s=4 of max_t=81: 1 -> 3 -> 9 -> 27 -> 81, keeping ceil(n / 3).
  HyperBandScheduler s = hyperband(81, 3);
  Trace t(s);
  std::vector<std::string> ids;
  for (int i = 0; i < 143; ++i) ids.push_back("t" + std::to_string(i)), t.add(ids.back());
  std::vector<std::string> live(ids.begin() + 62, ids.end());  // the 81 trials of s=4
  const std::vector<double> milestones{1, 3, 9, 27, 81};
  const std::vector<size_t> kept{27, 9, 3, 1};
  double time = 0;
  for (size_t m = 0; m < milestones.size(); ++m) {
    CHECK(s.brackets()[4].milestone == milestones[m]);
    // Every live trial runs to the milestone; scores by index, best last.
    for (size_t i = 0; i < live.size(); ++i) {
      for (double step = time + 1; step < milestones[m]; ++step) {
        CHECK(t.report(live[i], step, double(i)) == kContinue);
      }
      const Decision d = t.report(live[i], milestones[m], double(i));
      if (m == milestones.size() - 1) {
        CHECK(d == kStop);  // the last milestone ends the bracket
      } else if (i + 1 < live.size()) {
        CHECK(d == kPause);  // waits for the rest of the bracket
      } else {
        CHECK(d == kContinue);  // the last arrival is the best: it goes on
      }
    }
    if (m == milestones.size() - 1) break;
    auto stopped = t.take_stops();
    CHECK(stopped.size() == live.size() - kept[m]);
    live.erase(live.begin(), live.end() - static_cast<std::ptrdiff_t>(kept[m]));
    // The winners resume, the last arrival among them already running.
    std::vector<std::string> paused(live.begin(), live.end() - 1);
    while (!paused.empty()) {
      CHECK(t.choose(paused) == paused.front());
      paused.erase(paused.begin());
    }
    time = milestones[m];
  }
}

TEST_CASE("HyperBand max_t=9 rf=3: a bracket of 5 halves to 2 at milestone 3") {
  for (Mode mode : {Mode::kMax, Mode::kMin}) {
    const double sign = mode == Mode::kMax ? 1 : -1;
    HyperBandScheduler s = hyperband(9, 3, mode);
    Trace t(s);
    for (auto id : {"a", "b", "c"}) t.add(id);            // s=0: 3 trials to 9
    for (auto id : {"p", "q", "r", "u", "v"}) t.add(id);  // s=1: 5 trials from 3
    CHECK(s.brackets()[0].n0 == 3);
    CHECK(s.brackets()[1].n0 == 5);
    CHECK(s.brackets()[1].r0 == 3);
    CHECK(t.report("p", 1, sign * 0.1) == kContinue);
    CHECK(t.report("p", 3, sign * 0.1) == kPause);
    CHECK(t.choose({"p"}).empty());  // paused, not promoted
    CHECK(t.report("q", 3, sign * 0.5) == kPause);
    CHECK(t.report("r", 3, sign * 0.3) == kPause);
    CHECK(t.report("u", 3, sign * 0.9) == kPause);
    CHECK(t.take_stops().empty());
    CHECK(t.report("v", 3, sign * 0.2) == kStop);  // last arrival, bottom 3 of 5
    CHECK(t.take_stops() == std::vector<std::string>{"p", "r"});
    CHECK(t.choose({"q", "u"}, /*peek=*/true) == "q");
    CHECK(t.choose({"q", "u"}) == "q");  // idempotent
    CHECK(t.report("q", 4, sign * 0.5) == kContinue);
    CHECK(t.choose({"u"}) == "u");
    CHECK(t.report("u", 8, sign * 0.9) == kContinue);
    CHECK(t.report("u", 9, sign * 0.9) == kStop);  // max_t
    CHECK(t.report("q", 9, sign * 0.5) == kStop);
    // s=0 bracket: no halving, runs to 9.
    CHECK(t.report("a", 8, 1.0) == kContinue);
    CHECK(t.report("a", 9, 1.0) == kStop);
    CHECK(s.debug_string().find("num_stopped=3") != std::string::npos);
  }
}

TEST_CASE("HyperBand: a trial leaving completes the milestone for the others") {
  HyperBandScheduler s = hyperband(9, 3);
  Trace t(s);
  for (auto id : {"a", "b", "c", "p", "q", "r", "u", "v"}) t.add(id);
  for (auto id : {"p", "q", "r", "u"}) CHECK(t.report(id, 3, id[0] == 'u' ? 1.0 : 0.0) == kPause);
  t.complete("v");  // v ends early (stopper, error): the bracket is processed
  auto stopped = t.take_stops();
  CHECK(stopped.size() == 2);
  CHECK(t.choose({"u"}) == "u");
}

TEST_CASE("HyperBand save and restore continue with identical decisions") {
  HyperBandScheduler s1 = hyperband(9, 3), s2 = hyperband(9, 3);
  Trace t1(s1), t2(s2);
  const std::vector<std::string> ids{"a", "b", "c", "p", "q", "r", "u", "v"};
  for (const auto& id : ids) t1.add(id), t2.add(id);
  CHECK(t1.report("p", 3, 0.1) == kPause);
  CHECK(t1.report("q", 3, 0.5) == kPause);
  round_trip(s1, s2);
  for (auto* t : {&t1, &t2}) {
    CHECK(t->report("r", 3, 0.3) == kPause);
    CHECK(t->report("u", 3, 0.9) == kPause);
    CHECK(t->report("v", 3, 0.2) == kStop);
  }
  CHECK(t1.take_stops() == t2.take_stops());
  CHECK(t1.choose({"q", "u"}) == t2.choose({"q", "u"}));
  CHECK(s1.save() == s2.save());
}

TEST_CASE("HyperBand's state saved in parts: the brackets that changed, assembling into save()") {
  for (bool for_bohb : {false, true}) {
    CAPTURE(for_bohb);
    HyperBandScheduler s({.max_t = 9, .reduction_factor = 3, .for_bohb = for_bohb});
    s.set_search_properties("score", Mode::kMax);
    StoredParts stored;
    CHECK(stored.write(s).complete);
    int rounds = 0;
    size_t most_chunks = 0;
    // 1,200 trials, 17 a band: about 210 brackets in 4 chunks, all opened
    // (and written) at once as the trials are added, then run 8 at a time.
    check_leases(s, 1200, 9, 8, [&] {
      const StateParts parts = stored.write(s);
      CHECK(!parts.complete);
      if (rounds++ > 0) most_chunks = std::max(most_chunks, parts.chunks.size());
      if (rounds % 25 == 0) CHECK(stored.assembled() == s.save());
    });
    CHECK(stored.assembled() == s.save());
    CHECK(s.brackets().size() > 3 * HyperBandScheduler::kStateChunk);
    CHECK(most_chunks <= 2);  // the latest brackets' chunk, and the one before
    HyperBandScheduler resumed({.max_t = 9, .reduction_factor = 3, .for_bohb = for_bohb});
    resumed.restore(stored.assembled());
    CHECK(resumed.save() == s.save());
    CHECK(resumed.save_parts().complete);
  }
}

TEST_CASE("HyperBand: brackets take n0 trials created one at a time, then halve") {
  // max_t=9, rf=3: bracket s=0 runs 3 trials to 9, s=1 halves 5 trials at 3.
  // A model-based searcher creates one trial at a time, after the last ran.
  HyperBandScheduler s = hyperband(9, 3);
  Trace t(s);
  for (auto id : {"a", "b", "c"}) {
    t.add(id);
    CHECK(t.report(id, 9, 1.0) == kStop);
  }
  CHECK(s.brackets().size() == 1);
  const std::vector<std::pair<std::string, double>> scores{
      {"p", 0.1}, {"q", 0.5}, {"r", 0.3}, {"u", 0.9}};
  for (const auto& [id, score] : scores) {
    t.add(id);
    CHECK(t.choose({id}) == id);
    CHECK(t.report(id, 3, score) == kPause);  // waits for the bracket's 5th trial
    CHECK(t.take_stops().empty());
  }
  CHECK(s.brackets().size() == 2);
  t.add("v");
  CHECK(t.report("v", 3, 0.2) == kStop);  // the 5th arrives: bottom 3 of 5 stop
  CHECK(t.take_stops() == std::vector<std::string>{"p", "r"});
  CHECK(t.choose({"q", "u"}) == "q");
}

TEST_CASE("HyperBand for_bohb: trials created one at a time fill the 9 of s=2 at 1 first") {
  // max_t=9, rf=3, largest first: s=2 takes 9 trials from milestone 1 and
  // keeps 3 at 3, then 1 to 9; then s=1 (5 from 3) and s=0 (3 at 9).
  HyperBandScheduler s = for_bohb(9, 3);
  Trace t(s);
  const std::vector<double> scores{0.4, 0.1, 0.8, 0.3, 0.6, 0.2, 0.7, 0.5};
  for (size_t i = 0; i < scores.size(); ++i) {
    const std::string id = "t" + std::to_string(i);
    t.add(id);
    CHECK(t.choose({id}) == id);
    CHECK(t.report(id, 1, scores[i]) == kPause);  // waits for the bracket's 9th trial
    CHECK(t.take_stops().empty());
  }
  REQUIRE(s.brackets().size() == 1);
  CHECK(s.brackets()[0].s == 2);
  CHECK(s.brackets()[0].n0 == 9);
  t.add("t8");
  CHECK(t.report("t8", 1, 0.9) == kContinue);  // the 9th arrives, the best: on to 3
  auto stopped = t.take_stops();
  std::sort(stopped.begin(), stopped.end());
  CHECK(stopped == std::vector<std::string>{"t0", "t1", "t3", "t4", "t5", "t7"});
  CHECK(s.brackets()[0].milestone == 3);
  // The other two winners resume in the bracket's order.
  CHECK(t.choose({"t2", "t6"}) == "t2");
  CHECK(t.report("t2", 3, 0.8) == kPause);
  CHECK(t.choose({"t6"}) == "t6");
  CHECK(t.report("t6", 3, 0.7) == kPause);
  CHECK(t.report("t8", 3, 0.9) == kContinue);  // the last at 3 keeps the one place
  CHECK(t.take_stops().size() == 2);
  CHECK(t.report("t8", 9, 0.95) == kStop);
  // The 10th trial opens the next bracket: s=1, 5 trials from 3.
  t.add("t9");
  REQUIRE(s.brackets().size() == 2);
  CHECK(s.brackets()[1].s == 1);
  CHECK(s.brackets()[1].r0 == 3);
  CHECK(t.report("t9", 1, 0.5) == kContinue);
  CHECK(t.report("t9", 3, 0.5) == kPause);
}

TEST_CASE("HyperBand for_bohb serves brackets in the order they opened, not the least complete") {
  for (bool for_bohb : {false, true}) {
    CAPTURE(for_bohb);
    HyperBandScheduler s({.max_t = 9, .reduction_factor = 3, .for_bohb = for_bohb});
    s.set_search_properties("score", Mode::kMax);
    Trace t(s);
    if (!for_bohb) {  // plain HyperBand opens s=0 (3 trials to 9) first: fill and end it
      for (auto id : {"a", "b", "c"}) t.add(id), t.report(id, 9, 1.0);
    }
    // The next two brackets: s=2 (9 trials from 1), then s=1 (5 from 3) with
    // for_bohb; s=1, then s=2 without.
    const size_t first_size = for_bohb ? 9 : 5;
    const double first_milestone = for_bohb ? 1 : 3;
    std::vector<std::string> first, second;
    for (size_t i = 0; i < 14; ++i) {
      (i < first_size ? first : second).push_back("t" + std::to_string(i));
      t.add(i < first_size ? first.back() : second.back());
    }
    // All but one of the first bracket's trials reach its milestone.
    for (size_t i = 0; i + 1 < first.size(); ++i) {
      CHECK(t.report(first[i], first_milestone, 0.5) == kPause);
    }
    std::vector<std::string> pending{first.back()};
    pending.insert(pending.end(), second.begin(), second.end());
    CHECK(t.choose(pending, /*peek=*/true) == (for_bohb ? first.back() : second.front()));
  }
}

TEST_CASE("HyperBand: a bracket that cannot fill halves once nothing else waits") {
  HyperBandScheduler s = hyperband(9, 3);
  Trace t(s);
  for (auto id : {"a", "b", "c"}) t.add(id), t.report(id, 9, 1.0);
  for (auto id : {"p", "q", "r"}) t.add(id);
  CHECK(t.report("p", 3, 0.1) == kPause);
  CHECK(t.report("q", 3, 0.5) == kPause);
  CHECK(t.report("r", 3, 0.3) == kPause);
  // The searcher is done: no trial is pending, so the bracket of 3 (of 5)
  // halves to ceil(5 / 3) = 2 and the best paused one runs on.
  CHECK(t.choose({"p", "q", "r"}) == "q");
  CHECK(t.take_stops() == std::vector<std::string>{"p"});
}

TEST_CASE("HyperBand for_bohb: the largest bracket, unfilled, halves once nothing else waits") {
  HyperBandScheduler s = for_bohb(9, 3);
  Trace t(s);
  for (auto id : {"p", "q", "r", "u"}) t.add(id);  // 4 of s=2's 9
  CHECK(t.report("p", 1, 0.1) == kPause);
  CHECK(t.report("q", 1, 0.5) == kPause);
  CHECK(t.report("r", 1, 0.3) == kPause);
  CHECK(t.report("u", 1, 0.9) == kPause);
  // The searcher is done: no trial is pending, so the bracket of 4 (of 9)
  // halves to ceil(9 / 3) = 3 and the winners run on to 3.
  CHECK(t.choose({"p", "q", "r", "u"}) == "q");
  CHECK(t.take_stops() == std::vector<std::string>{"p"});
  CHECK(s.brackets()[0].milestone == 3);
}

TEST_CASE("HyperBand: a loser the controller is still pausing at the halving never runs again") {
  HyperBandScheduler s = hyperband(9, 3);
  Trace t(s);
  for (auto id : {"a", "b", "c", "p", "q", "r", "u", "v"}) t.add(id);
  // p pauses at milestone 3, but its checkpoint is still being written when
  // the last trial of the bracket arrives and p loses the halving.
  CHECK(t.report("p", 3, 0.1) == kPause);
  for (auto id : {"q", "r", "u"}) CHECK(t.report(id, 3, id[0] == 'r' ? 0.3 : 0.8) == kPause);
  CHECK(t.report("v", 3, 0.2) == kStop);
  auto losers = s.take_trials_to_stop();
  std::sort(losers.begin(), losers.end());
  CHECK(losers == std::vector<std::string>{"p", "r"});
  // The controller ends only PAUSED or PENDING trials: r now, p not yet.
  s.on_trial_remove(t.view("r"));
  // Once p has paused it must not run again (it would run to max_t
  // unsupervised): it is handed out again instead.
  CHECK(t.choose({"p"}, /*peek=*/true).empty());
  CHECK(s.take_trials_to_stop() == std::vector<std::string>{"p"});
  s.on_trial_remove(t.view("p"));
  CHECK(s.take_trials_to_stop().empty());
  CHECK(t.choose({"q", "u"}) == "q");
}

TEST_CASE("HyperBand asynchronous: HyperBand's brackets judged as trials arrive, none waits") {
  const auto s =
      make_hyperband_scheduler({.max_t = 81, .reduction_factor = 3, .asynchronous = true});
  const auto* asha = dynamic_cast<const AshaScheduler*>(s.get());
  REQUIRE(asha != nullptr);
  // One bracket per HyperBand bracket, first milestones 1, 3, 9, 27, 81.
  CHECK(asha->milestones(0) == std::vector<double>{81, 27, 9, 3, 1});
  CHECK(asha->milestones(2) == std::vector<double>{81, 27, 9});
  CHECK(asha->milestones(4) == std::vector<double>{81});
  CHECK_THROWS(asha->milestones(5));

  s->set_search_properties("score", Mode::kMax);
  Trace trace(*s);
  // Each trial is worse than all before it: all but each bracket's first
  // stop at their bracket's first milestone, at once, without pausing.
  std::set<double> stopped_at;
  int full_length = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "t" + std::to_string(i);
    trace.add(id);
    for (int t = 1; t <= 81; ++t) {
      const Decision d = trace.report(id, t, -i - 0.001 * t);
      REQUIRE(d != Decision::kPause);
      if (d == Decision::kStop) {
        if (t < 81) stopped_at.insert(t);
        full_length += t == 81;
        break;
      }
    }
  }
  CHECK(stopped_at.size() >= 2);  // the trials went to several brackets
  for (double t : stopped_at) CHECK((t == 1 || t == 3 || t == 9 || t == 27));
  CHECK(full_length >= 2);
  CHECK(full_length <= 5);
}

TEST_CASE("HyperBand asynchronous keeps HyperBand's checks and its smallest milestone") {
  CHECK_THROWS_AS(make_hyperband_scheduler({.max_t = 0, .asynchronous = true}), ConfigError);
  CHECK_THROWS_AS(make_hyperband_scheduler({.reduction_factor = 1, .asynchronous = true}),
                  ConfigError);
  // max_t 100, eta 3: HyperBand's milestones 100/3^s for s <= 4, the smallest 1.
  const auto s =
      make_hyperband_scheduler({.max_t = 100, .reduction_factor = 3, .asynchronous = true});
  const auto* asha = dynamic_cast<const AshaScheduler*>(s.get());
  REQUIRE(asha != nullptr);
  CHECK(asha->milestones(0).back() == 1);
  CHECK(asha->milestones(4) == std::vector<double>{81});
  // Synchronous unless asked.
  CHECK(dynamic_cast<const HyperBandScheduler*>(make_hyperband_scheduler({}).get()) != nullptr);
}

TEST_CASE("HyperBand leases a trial up to its bracket's milestone, and never decides inside one") {
  HyperBandScheduler s = hyperband(9, 3);  // brackets from 9 (3 trials), 3 (5), 1 (9)
  Trace t(s);
  for (int i = 0; i < 3; ++i) t.add("a" + std::to_string(i));
  CHECK(s.continues_through(t.view("a0"), 0) == 8);  // first bracket: straight to 9
  // Another time_attr than training_iteration: no lease.
  HyperBandScheduler timed({.time_attr = "time_total_s", .max_t = 9, .reduction_factor = 3});
  timed.set_search_properties("score", Mode::kMax);
  Trace tt(timed, "time_total_s");
  tt.add("a");
  CHECK(timed.continues_through(tt.view("a"), 0) == 0);

  // Brackets from milestone 1 halve at 1 and 3: the winners' leases grow
  // with the milestone. Fifty trials fill every bracket of a band; none is
  // decided on inside a lease, plain or for BOHB.
  for (bool bohb : {false, true}) {
    INFO("for_bohb = ", bohb);
    HyperBandScheduler h({.max_t = 27, .reduction_factor = 3, .for_bohb = bohb});
    h.set_search_properties("score", Mode::kMax);
    const LeaseCheck check = check_leases(h, 50, 27, 4);
    CHECK(check.pauses > 20);
    CHECK(check.decisions > 30);
    CHECK(check.inside_lease == 0);
  }
}
