// EventServer: an HTTP/1.1 server in which no client can hold up another.
//
// One thread owns every socket (epoll, non-blocking): it accepts, reads
// request heads and writes answers as the peers allow. Only a complete
// request reaches a worker thread, and the worker never touches a socket:
// it computes the answer and hands it back. So an idle connection, one that
// sends its head a byte at a time, or one that never reads its answer costs
// a file descriptor and some memory, never a worker, and is closed when its
// deadline passes. Each address may hold a limited number of connections: a
// new one beyond it replaces that address's oldest one waiting for a request
// (idle holders cannot lock out a new client), or is refused when all of
// them are being answered.
//
// Thread safety: bind() and serve() from one thread; stop() from any.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "dashboard/internal/http.h"

namespace tune::dashboard::internal {

struct EventServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                   // 0 picks a free one
  int workers = 4;                // threads computing answers; sockets never block them
  double request_timeout_s = 10;  // a whole request head must arrive within this
                                  // (from the connection or its previous answer)
  double write_timeout_s = 30;    // an answer closes when the peer reads none of it for this
  size_t max_connections_per_address = 32;  // see the class comment
  size_t max_connections = 512;  // over all addresses, the same way (under a 1024-file ulimit)
  int backlog = 1024;            // listen(2)'s queue of connections not yet accepted
};

// Computes the answer to a request; runs on a worker thread. An exception
// becomes a 500 with its message.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class EventServer {
 public:
  EventServer(EventServerOptions options, HttpHandler handler);
  ~EventServer();
  EventServer(const EventServer&) = delete;
  EventServer& operator=(const EventServer&) = delete;

  // Binds and listens; returns the port. Throws tune::Error when the address
  // cannot be resolved or bound.
  int bind();
  // Serves until stop(); then closes every connection and joins the workers.
  void serve();
  // Makes serve() return; safe from any thread, before or during serve().
  void stop();

 private:
  struct Loop;
  EventServerOptions options_;
  HttpHandler handler_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() and finished answers wake the loop
  std::atomic<bool> stopping_ = false;
  std::unique_ptr<Loop> loop_;
};

}  // namespace tune::dashboard::internal
