// PeerBook: which connection may speak for which rank, with thousands of
// peers coming and going as groups end and start.
#include "tune/channel/peer_book.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace tune {
namespace {

protocol::Hello hello_as(const std::string& trial, int rank) { return {trial, rank, 0}; }
protocol::Message any_report() { return protocol::Report{}; }

TEST_CASE("peer book: a connection speaks only with the key its HELLO held") {
  PeerBook book;
  book.issue("key-a", "t1", 0, 0);
  CHECK_FALSE(book.check_key("conn-a", "key-a", hello_as("t1", 0)));
  // Another rank's HELLO with this key, or this rank's with another key: refused.
  CHECK(book.check_key("conn-b", "key-a", hello_as("t1", 1)));
  CHECK(book.check_key("conn-b", "key-b", hello_as("t1", 0)));
  CHECK_FALSE(book.check_key("conn-a", "key-a", any_report()));
  CHECK(book.check_key("conn-a", "key-b", any_report()));
}

TEST_CASE("peer book: a revoked key is forgotten by its connections and by no other") {
  PeerBook book;
  for (int t = 0; t < 1000; ++t) {
    for (int r = 0; r < 4; ++r) {
      const std::string key = fmt::format("key-{}-{}", t, r);
      const std::string conn = fmt::format("conn-{}-{}", t, r);
      book.issue(key, fmt::format("t{}", t), 0, r);
      REQUIRE_FALSE(book.check_key(conn, key, hello_as(fmt::format("t{}", t), r)));
      book.bind(conn, {fmt::format("t{}", t), r});
    }
  }
  book.unbind("conn-7-2");
  book.revoke("key-7-2");
  CHECK(book.peer("conn-7-2") == nullptr);
  // Its key is no longer issued: a HELLO with it is refused.
  CHECK(book.check_key("conn-new", "key-7-2", hello_as("t7", 2)));
  // The routing id holds no key any more; every other one still holds its own.
  CHECK_FALSE(book.check_key("conn-7-2", "key-other", any_report()));
  CHECK(book.check_key("conn-7-1", "key-7-2", any_report()));
  CHECK(book.check_key("conn-999-3", "key-7-2", any_report()));
  REQUIRE(book.peer("conn-999-3") != nullptr);
  CHECK(book.peer("conn-999-3")->trial_id == "t999");
}

TEST_CASE("peer book: a heartbeat counts only from the key its rank's connection holds") {
  PeerBook book;
  book.issue("key-a", "t1", 0, 0);
  REQUIRE_FALSE(book.check_key("conn-a", "key-a", hello_as("t1", 0)));
  book.bind("conn-a", {"t1", 0});
  CHECK(book.beats_for_its_rank({"t1", 0, 0}, "key-a"));
  CHECK_FALSE(book.beats_for_its_rank({"t1", 0, 0}, "key-b"));
  // Once the key is revoked, the rank's connection holds none to check against.
  book.revoke("key-a");
  CHECK(book.beats_for_its_rank({"t1", 0, 0}, "key-b"));
}

}  // namespace
}  // namespace tune
