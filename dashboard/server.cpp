#include "dashboard/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <random>

#include "core/errors.h"
#include "dashboard/page.h"

namespace tune::dashboard {
namespace {

// cpp-httplib compresses text/* and the exact types "application/json" and
// "application/javascript" with Brotli at its top quality: seconds for a few
// megabytes of trials. A charset parameter opts an answer out; on loopback
// compression would only cost time.
constexpr const char* kJson = "application/json; charset=utf-8";
constexpr const char* kCookie = "tunerun_token";

// Metrics and logs are user data: invalid UTF-8 is replaced, never thrown on.
std::string dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string error_json(const std::string& message) { return dump(Json{{"error", message}}); }

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

}  // namespace

DashboardServer::DashboardServer(Api& api, ServerOptions options)
    : api_(api), options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  // cpp-httplib sets SO_REUSEPORT, which lets a second dashboard share the
  // port silently; SO_REUSEADDR alone still allows a quick restart.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::string query_token = req.get_param_value("token");
    if (authorized(query_token, req.get_header_value("Cookie"),
                   req.get_header_value("Authorization"))) {
      if (!options_.token.empty() && !query_token.empty()) {
        res.set_header("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                                 kCookie, options_.token));
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.status = 403;
    res.set_content("403: this dashboard needs the token printed when it started (?token=...)\n",
                    "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(live_page(), "text/html; charset=utf-8");
  });
  s.Get(R"(/static/([a-z_.]+))", [](const httplib::Request& req, httplib::Response& res) {
    const auto asset = static_asset(req.matches[1].str());
    if (!asset) {
      res.status = 404;
      return;
    }
    res.set_content(std::string(asset->text), asset->content_type);
    res.set_header("Cache-Control", "max-age=3600");
  });
  s.Get(R"(/api/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    Query query;
    for (const auto& [key, value] : req.params) {
      if (key != "token") query[key] = value;
    }
    res.set_header("Cache-Control", "no-store");
    try {
      res.set_content(*api_.get_text(req.matches[1].str(), query), kJson);
    } catch (const NotFound& e) {
      res.status = 404;
      res.set_content(error_json(e.what()), kJson);
    } catch (const std::exception& e) {
      // A missing, corrupt or locked database, or a bad file: the page shows it.
      res.status = 500;
      res.set_content(error_json(e.what()), kJson);
    }
  });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string message = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          message = e.what();
        } catch (...) {
        }
        res.status = 500;
        res.set_content(error_json(message), kJson);
      });
}

DashboardServer::~DashboardServer() = default;

bool DashboardServer::authorized(const std::string& query_token, const std::string& cookie,
                                 const std::string& authorization) const {
  if (options_.token.empty()) return true;
  return query_token == options_.token || cookie_value(cookie, kCookie) == options_.token ||
         authorization == "token " + options_.token;
}

int DashboardServer::bind() {
  if (options_.port == 0) {
    const int port = server_->bind_to_any_port(options_.host);
    if (port < 0) throw Error(fmt::format("cannot bind {}: no free port", options_.host));
    return port;
  }
  if (!server_->bind_to_port(options_.host, options_.port)) {
    throw Error(fmt::format("cannot bind {}:{} (in use, or not an address of this machine)",
                            options_.host, options_.port));
  }
  return options_.port;
}

void DashboardServer::serve() { server_->listen_after_bind(); }

void DashboardServer::stop() { server_->stop(); }

std::string DashboardServer::make_token() {
  std::random_device device;
  std::string out;
  for (int i = 0; i < 6; ++i) out += fmt::format("{:08x}", device());
  return out;
}

}  // namespace tune::dashboard
