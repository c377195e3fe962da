#include "dashboard/internal/http.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tune::dashboard::internal {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

void parse_query(std::string_view query, std::map<std::string, std::string>& out) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string key = percent_decode(pair.substr(0, eq), true);
    out[key] = eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true);
  }
}

}  // namespace

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

bool HttpRequest::keep_alive() const {
  const std::string connection = lower(header("connection"));
  if (connection.find("close") != std::string::npos) return false;
  return http11 || connection.find("keep-alive") != std::string::npos;
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 &&
        hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else if (text[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

ParseResult parse_request_head(std::string_view bytes, HttpRequest& out, size_t& head_size) {
  // Tolerate blank lines before a request (RFC 9112, 2.2).
  size_t start = 0;
  while (start + 1 < bytes.size() && bytes[start] == '\r' && bytes[start + 1] == '\n') start += 2;
  const size_t end = bytes.find("\r\n\r\n", start);
  if (end == std::string_view::npos) {
    return bytes.size() > kMaxRequestHead ? ParseResult::kTooLarge : ParseResult::kIncomplete;
  }
  if (end + 4 > kMaxRequestHead) return ParseResult::kTooLarge;
  head_size = end + 4;
  std::string_view head = bytes.substr(start, end - start);

  out = HttpRequest();
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return ParseResult::kBad;
  out.method = std::string(line.substr(0, sp1));
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    out.http11 = true;
  } else if (version == "HTTP/1.0") {
    out.http11 = false;
  } else {
    return ParseResult::kBad;
  }
  if (target.empty() || target.front() != '/') return ParseResult::kBad;
  const size_t question = target.find('?');
  out.path = percent_decode(target.substr(0, question), false);
  if (question != std::string_view::npos) parse_query(target.substr(question + 1), out.params);

  std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
  while (!rest.empty()) {
    const size_t eol = rest.find("\r\n");
    const std::string_view field = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 2);
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0) return ParseResult::kBad;
    out.headers[lower(field.substr(0, colon))] = std::string(trim(field.substr(colon + 1)));
  }
  const std::string length = out.header("content-length");
  out.has_body = out.headers.contains("transfer-encoding") ||
                 (!length.empty() && length.find_first_not_of('0') != std::string::npos);
  return ParseResult::kComplete;
}

HttpResponse HttpResponse::text(int status, std::string body, std::string content_type) {
  HttpResponse out;
  out.status = status;
  out.content_type = std::move(content_type);
  out.body = std::make_shared<const std::string>(std::move(body));
  return out;
}

std::string response_head(const HttpResponse& response, bool keep_alive) {
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\n", response.status, reason_phrase(response.status));
  if (response.status != 304) {  // Not Modified: the body the client has is the one
    out += fmt::format("Content-Type: {}\r\n", response.content_type);
    out += fmt::format("Content-Length: {}\r\n", response.body ? response.body->size() : 0);
  }
  out += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  out += "X-Content-Type-Options: nosniff\r\n";
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  out += "\r\n";
  return out;
}

}  // namespace tune::dashboard::internal
