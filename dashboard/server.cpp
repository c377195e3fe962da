#include "dashboard/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <regex>
#include <string_view>

#include "core/errors.h"
#include "dashboard/internal/event_server.h"
#include "dashboard/internal/http.h"
#include "dashboard/page.h"

namespace tune::dashboard {
namespace {

using internal::HttpRequest;
using internal::HttpResponse;

constexpr const char* kJson = "application/json; charset=utf-8";
constexpr const char* kCookie = "tunerun_token";

// Metrics and logs are user data: invalid UTF-8 is replaced, never thrown on.
std::string dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

HttpResponse error_json(int status, const std::string& message) {
  HttpResponse out = HttpResponse::text(status, dump(Json{{"error", message}}), kJson);
  out.headers.emplace_back("Cache-Control", "no-store");
  return out;
}

std::string cookie_value(const std::string& header, const std::string& name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    part.erase(0, part.find_first_not_of(' '));
    if (part.starts_with(name + "=")) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return "";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "Host: [::1]:8265" -> "::1"; "Host: localhost:8265" -> "localhost".
std::string host_name(const std::string& header) {
  if (header.starts_with("[")) {
    const size_t close = header.find(']');
    return close == std::string::npos ? header : header.substr(1, close - 1);
  }
  return header.substr(0, header.find(':'));
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

bool is_wildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "*";
}

}  // namespace

DashboardServer::DashboardServer(Api& api, ServerOptions options)
    : api_(api), options_(std::move(options)) {
  server_ = std::make_unique<internal::EventServer>(
      internal::EventServerOptions{
          .host = options_.host,
          .port = options_.port,
          .workers = options_.workers,
          .request_timeout_s = options_.request_timeout_s,
          .write_timeout_s = options_.write_timeout_s,
          .max_connections_per_address = options_.max_connections_per_address},
      [this](const HttpRequest& request) { return handle(request); });
}

DashboardServer::~DashboardServer() = default;

bool DashboardServer::host_allowed(const std::string& host_header) const {
  if (is_wildcard(options_.host)) return true;
  const std::string name = lower(host_name(host_header));
  if (name == lower(options_.host)) return true;
  return is_loopback(options_.host) &&
         (name == "localhost" || name == "::1" || name == "127.0.0.1");
}

bool DashboardServer::authorized(const HttpRequest& request) const {
  if (options_.token.empty()) return true;
  auto query = request.params.find("token");
  return (query != request.params.end() && query->second == options_.token) ||
         cookie_value(request.header("cookie"), kCookie) == options_.token ||
         request.header("authorization") == "token " + options_.token;
}

HttpResponse DashboardServer::handle(const HttpRequest& request) {
  // HTTP/1.1 requires Host; an HTTP/1.0 client that sends none is no browser.
  const bool has_host = request.headers.contains("host");
  if ((request.http11 && !has_host) || (has_host && !host_allowed(request.header("host")))) {
    return HttpResponse::text(403, fmt::format("403: this dashboard answers to {} only, not to "
                                               "Host '{}' (another --host serves other names)\n",
                                               options_.host, request.header("host")));
  }
  if (request.method != "GET") {
    HttpResponse out = HttpResponse::text(405, "405: this dashboard is read-only\n");
    out.headers.emplace_back("Allow", "GET");
    return out;
  }
  if (!authorized(request)) {
    return HttpResponse::text(
        403, "403: this dashboard needs the token printed when it started (?token=...)\n");
  }
  HttpResponse out = route(request);
  if (!options_.token.empty() && request.params.contains("token")) {
    out.headers.emplace_back("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                                       kCookie, options_.token));
  }
  return out;
}

HttpResponse DashboardServer::route(const HttpRequest& request) {
  const std::string& path = request.path;
  if (path == "/") return HttpResponse::text(200, live_page(), "text/html; charset=utf-8");
  static const std::regex kStatic(R"(/static/([a-z_.]+))");
  std::smatch match;
  if (std::regex_match(path, match, kStatic)) {
    const auto asset = static_asset(match[1].str());
    if (!asset) return HttpResponse::text(404, "404: no such file\n");
    HttpResponse out = HttpResponse::text(200, std::string(asset->text), asset->content_type);
    out.headers.emplace_back("Cache-Control", "max-age=3600");
    return out;
  }
  if (!path.starts_with("/api/") || path.size() == 5) {
    return HttpResponse::text(404, "404: no such page\n");
  }
  Query query;
  for (const auto& [key, value] : request.params) {
    if (key != "token") query[key] = value;
  }
  try {
    HttpResponse out;
    out.content_type = kJson;
    out.body = api_.get_text(path.substr(5), query);
    // The browser asks again with the tag (no-cache: always); an answer that
    // has not changed costs a head, not megabytes, on every change of the
    // experiment.
    const std::string tag =
        fmt::format("\"{:016x}-{}\"", std::hash<std::string_view>{}(*out.body), out.body->size());
    out.headers.emplace_back("Cache-Control", "no-cache");
    out.headers.emplace_back("ETag", tag);
    if (request.header("if-none-match") == tag) {
      out.status = 304;
      out.body.reset();
    }
    return out;
  } catch (const NotFound& e) {
    return error_json(404, e.what());
  } catch (const std::exception& e) {
    // A missing, corrupt or locked database, or a bad file: the page shows it.
    return error_json(500, e.what());
  }
}

int DashboardServer::bind() { return server_->bind(); }

void DashboardServer::serve() { server_->serve(); }

void DashboardServer::stop() { server_->stop(); }

std::string DashboardServer::make_token() {
  std::random_device device;
  std::string out;
  for (int i = 0; i < 6; ++i) out += fmt::format("{:08x}", device());
  return out;
}

}  // namespace tune::dashboard
