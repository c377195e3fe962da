// The simulated peers' schedule (tune/launch/sim/event_queue.h): events run in
// due order, ties in the order scheduled, cancelled ones never, on the
// clock the queue is given.
#include "tune/launch/sim/event_queue.h"

#include <doctest/doctest.h>

#include <string>

using tune::Clock;
using tune::sim::EventQueue;

TEST_CASE("events run when due, earliest first, ties in the order they were scheduled") {
  Clock::time_point now{};
  EventQueue queue([&now] { return now; });
  std::string ran;
  queue.after(2.0, [&] { ran += "c"; });
  queue.after(1.0, [&] { ran += "a"; });
  queue.after(1.0, [&] { ran += "b"; });
  const auto cancelled = queue.after(1.5, [&] { ran += "x"; });
  queue.cancel(cancelled);
  queue.run_due();
  CHECK(ran.empty());
  REQUIRE(queue.next_due());
  CHECK(*queue.next_due() == now + std::chrono::seconds(1));

  now += std::chrono::milliseconds(1500);
  queue.run_due();
  CHECK(ran == "ab");
  // An event scheduled by one that runs, already due, runs in the same turn.
  queue.after(0.0, [&] {
    queue.after(0.0, [&] { ran += "e"; });
    ran += "d";
  });
  queue.run_due();
  CHECK(ran == "abde");

  now += std::chrono::seconds(1);
  queue.run_due();
  CHECK(ran == "abdec");
  CHECK_FALSE(queue.next_due());
  queue.cancel(cancelled);  // one that never ran, twice: no error
}
