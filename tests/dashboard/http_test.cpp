// Request heads as the dashboard's server reads them, and its answers' heads.
#include "dashboard/internal/http.h"

#include <doctest/doctest.h>

namespace tune::dashboard::internal {
namespace {

TEST_CASE("a request head: path and query decoded, headers by lower-case name, keep-alive") {
  HttpRequest r;
  size_t size = 0;
  const std::string text =
      "GET /api/exp/my%20run/curves?metric=val+loss&token=a%2Bb HTTP/1.1\r\n"
      "Host: localhost:8265\r\nCookie: x=1\r\n\r\nGET / HTTP/1.1\r\n";
  REQUIRE(parse_request_head(text, r, size) == ParseResult::kComplete);
  CHECK(size == text.find("GET /", 5));
  CHECK(r.method == "GET");
  CHECK(r.path == "/api/exp/my run/curves");
  CHECK(r.params.at("metric") == "val loss");
  CHECK(r.params.at("token") == "a+b");
  CHECK(r.header("host") == "localhost:8265");
  CHECK(r.keep_alive());
  CHECK_FALSE(r.has_body);
}

TEST_CASE("a head not yet ended waits; a malformed or endless one is refused; a body is noticed") {
  HttpRequest r;
  size_t size = 0;
  CHECK(parse_request_head("GET / HTTP/1.1\r\nHost: x\r\n", r, size) == ParseResult::kIncomplete);
  CHECK(parse_request_head("NONSENSE\r\n\r\n", r, size) == ParseResult::kBad);
  CHECK(parse_request_head("GET / SPDY/9\r\n\r\n", r, size) == ParseResult::kBad);
  CHECK(parse_request_head("GET / HTTP/1.1\r\nno colon\r\n\r\n", r, size) == ParseResult::kBad);
  const std::string endless = "GET / HTTP/1.1\r\nX: " + std::string(kMaxRequestHead, 'a');
  CHECK(parse_request_head(endless, r, size) == ParseResult::kTooLarge);
  REQUIRE(parse_request_head("POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}", r, size) ==
          ParseResult::kComplete);
  CHECK(r.has_body);
  CHECK_FALSE(r.keep_alive());  // HTTP/1.0 without keep-alive
}

TEST_CASE("an answer's head carries its length and whether the connection stays") {
  HttpResponse r = HttpResponse::text(404, "gone");
  r.headers.emplace_back("Cache-Control", "no-store");
  const std::string head = response_head(r, false);
  CHECK(head.starts_with("HTTP/1.1 404 Not Found\r\n"));
  CHECK(head.find("Content-Length: 4\r\n") != std::string::npos);
  CHECK(head.find("Connection: close\r\n") != std::string::npos);
  CHECK(head.find("Cache-Control: no-store\r\n") != std::string::npos);
  CHECK(head.ends_with("\r\n\r\n"));
  CHECK(percent_decode("100%", false) == "100%");
}

}  // namespace
}  // namespace tune::dashboard::internal
