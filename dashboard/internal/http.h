// The little of HTTP/1.1 the dashboard speaks: a request head parsed from
// the bytes a connection has sent so far, and a response's head written.
// Pure functions, so every rule is testable without sockets.
//
// Only heads are read: the dashboard is read-only and answers a request
// that announces a body (Content-Length > 0, Transfer-Encoding) with 405 or
// 400 and closes the connection instead of reading it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tune::dashboard::internal {

constexpr size_t kMaxRequestHead = 16 * 1024;  // a larger head is refused (431)

struct HttpRequest {
  std::string method;                          // "GET"
  std::string path;                            // percent-decoded, without the query
  std::map<std::string, std::string> params;   // the query, decoded ('+' is a space)
  std::map<std::string, std::string> headers;  // names lower-cased; a repeated one: the last
  bool http11 = true;                          // HTTP/1.1 (keep-alive by default), else 1.0
  bool has_body = false;                       // Content-Length > 0 or Transfer-Encoding

  // The header's value, or "" when absent.
  std::string header(const std::string& lower_name) const;
  // Whether the connection may carry another request after this one.
  bool keep_alive() const;
};

enum class ParseResult {
  kIncomplete,  // the head has not ended yet (and is under kMaxRequestHead)
  kComplete,    // `out` holds the request; `head_size` bytes were its head
  kBad,         // malformed: answer 400 and close
  kTooLarge,    // no end within kMaxRequestHead: answer 431 and close
};

ParseResult parse_request_head(std::string_view bytes, HttpRequest& out, size_t& head_size);

// "%41+b" -> "A b" when `plus_is_space` (query strings), else "A+b"; an
// invalid escape is kept as written.
std::string percent_decode(std::string_view text, bool plus_is_space);

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::shared_ptr<const std::string> body;  // shared: a cached answer is sent without a copy
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Set-Cookie

  static HttpResponse text(int status, std::string body,
                           std::string content_type = "text/plain; charset=utf-8");
};

// The status line and headers, Content-Length and Connection included,
// ending with the blank line.
std::string response_head(const HttpResponse& response, bool keep_alive);

}  // namespace tune::dashboard::internal
