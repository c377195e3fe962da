// Refused control-channel peers in the run log (tune/execution/refusal_log.h): each
// address named, at a bounded rate per address, on a clock the test drives.
#include "tune/execution/refusal_log.h"

#include <doctest/doctest.h>

using namespace tune;
using namespace std::chrono_literals;

TEST_CASE("each refused address gets its line; one address repeating is quiet for a while") {
  RefusalLog log(10s);
  const Clock::time_point t0{};
  const Refusal first{"10.0.0.7", "it presented CURVE key K, not one issued to a live rank"};
  const Refusal second{"10.0.0.8", first.why};
  CHECK(log.line(first, t0) ==
        "warning: refused a connection to the control channel from 10.0.0.7: it presented CURVE "
        "key K, not one issued to a live rank");
  // Another address with the same reason is named all the same.
  auto other = log.line(second, t0 + 1s);
  REQUIRE(other);
  CHECK(other->find("from 10.0.0.8: it presented") != std::string::npos);
  CHECK_FALSE(log.line(second, t0 + 1s));  // quiet now
  CHECK_FALSE(log.line(first, t0 + 2s));
  CHECK_FALSE(log.line(first, t0 + 9s));
  // After the quiet period: its next line counts what went unwritten.
  auto again = log.line(first, t0 + 10s);
  REQUIRE(again);
  CHECK(again->find("from 10.0.0.7") != std::string::npos);
  CHECK(again->ends_with("(and 2 more from there since the last such line)"));
}

TEST_CASE("a finished rank's late connection is no warning and hides no outsider's") {
  RefusalLog log(10s);
  const Clock::time_point t0{};
  auto late = log.line(
      {"198.18.0.11", "it presented CURVE key K, issued to a rank whose group has ended", true},
      t0);
  REQUIRE(late);
  CHECK(late->starts_with("refused a connection"));
  auto outsider = log.line({"198.18.0.11", "it failed the CURVE handshake", false}, t0 + 1s);
  REQUIRE(outsider);
  CHECK(
      outsider->starts_with("warning: refused a connection to the control channel from "
                            "198.18.0.11"));
  CHECK(log.line({"", "it failed the CURVE handshake"}, t0)
            ->find("a peer whose address is unknown") != std::string::npos);
}
