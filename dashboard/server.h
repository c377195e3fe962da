// DashboardServer: serves the dashboard page, its embedded scripts and the
// Api's JSON over HTTP, read-only: only GET is answered.
//
// Slow or idle clients cannot delay others: sockets are served by one
// event loop and only complete requests reach the workers
// (dashboard/internal/event_server.h), with short deadlines and a cap on
// connections per address.
//
// Binds 127.0.0.1 by default. With a non-empty token every request must
// carry it, as Jupyter does: ?token=T once (the answer sets a cookie), the
// cookie, or the header "Authorization: token T"; others get 403. The Host
// header must name the bound address (for loopback also "localhost"), so a
// web page under another name that resolves to this machine (DNS rebinding)
// is refused; bound to every interface (0.0.0.0, ::) any name is accepted,
// and the token protects it.
// A database that cannot be read answers an error JSON (the page shows it);
// no request ends the server.
#pragma once

#include <memory>
#include <string>

#include "dashboard/api.h"

namespace tune::dashboard {

namespace internal {
class EventServer;
struct HttpRequest;
struct HttpResponse;
}  // namespace internal

struct ServerOptions {
  std::string host = "127.0.0.1";  // 0.0.0.0 serves every interface (then set a token)
  int port = 8265;                 // Ray's dashboard port; 0 picks a free one
  std::string token;               // empty: no token asked (loopback only)
  int workers = 4;                 // threads computing answers; no socket ever blocks one
  double request_timeout_s = 10;   // a request head must arrive within this, else closed
  double write_timeout_s = 30;     // an answer its client reads none of for this is dropped
  size_t max_connections_per_address = 32;  // beyond it, the address's oldest idle one closes
};

class DashboardServer {
 public:
  DashboardServer(Api& api, ServerOptions options);
  ~DashboardServer();

  // Binds the address; returns the port bound. Throws tune::Error when the
  // address cannot be bound (in use, not local).
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void serve();
  void stop();

  // A new random token: 48 hex digits from std::random_device.
  static std::string make_token();

 private:
  internal::HttpResponse handle(const internal::HttpRequest& request);
  internal::HttpResponse route(const internal::HttpRequest& request);
  bool authorized(const internal::HttpRequest& request) const;
  bool host_allowed(const std::string& host_header) const;

  Api& api_;
  ServerOptions options_;
  std::unique_ptr<internal::EventServer> server_;
};

}  // namespace tune::dashboard
