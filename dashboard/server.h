// DashboardServer: serves the dashboard page, its embedded scripts and the
// Api's JSON over HTTP (cpp-httplib), read-only: only GET is routed.
//
// Binds 127.0.0.1 by default. With a non-empty token every request must
// carry it, as Jupyter does: ?token=T once (the answer sets a cookie), the
// cookie, or the header "Authorization: token T"; others get 403.
// A database that cannot be read answers an error JSON (the page shows it);
// no request ends the server.
#pragma once

#include <memory>
#include <string>

#include "dashboard/api.h"

namespace httplib {
class Server;
}

namespace tune::dashboard {

struct ServerOptions {
  std::string host = "127.0.0.1";  // 0.0.0.0 serves every interface (then set a token)
  int port = 8265;                 // Ray's dashboard port; 0 picks a free one
  std::string token;               // empty: no token asked (loopback only)
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
  bool authorized(const std::string& query_token, const std::string& cookie,
                  const std::string& authorization) const;

  Api& api_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
};

}  // namespace tune::dashboard
