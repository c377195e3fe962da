// The event-loop server with clients that misbehave: idle, slow to send,
// never reading, too many from one address. Raw loopback sockets play them;
// cpp-httplib's client plays the well-behaved one. No assert is on a
// duration: each checks what was (or was not) served while the misbehaving
// connections were still open.
#include "dashboard/internal/event_server.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

namespace tune::dashboard::internal {
namespace {

// A server answering "hello" (or `big` bytes for /big) on a free port.
class Serving {
 public:
  explicit Serving(EventServerOptions options, size_t big = 0)
      : server_(std::move(options), [big](const HttpRequest& r) {
          return HttpResponse::text(200, r.path == "/big" ? std::string(big, 'x') : "hello");
        }) {
    port_ = server_.bind();
    thread_ = std::thread([this] { server_.serve(); });
  }
  ~Serving() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);  // generous: a stalled server would fail the checks below first
    return c;
  }

 private:
  EventServer server_;
  int port_ = 0;
  std::thread thread_;
};

// A raw connection to the server; closed at the end.
class Raw {
 public:
  explicit Raw(int port, int receive_buffer = 0) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  ~Raw() { close(fd_); }
  Raw(const Raw&) = delete;

  void send_text(const std::string& text) {
    REQUIRE(send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == ssize_t(text.size()));
  }
  // Open: the server has neither closed it nor sent anything on it.
  bool open() const {
    char byte;
    return recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK) < 0 && errno == EAGAIN;
  }
  // Waits (up to a generous minute) for the server to close it.
  bool closed_by_server() const {
    char buffer[4096];
    for (int i = 0; i < 600; ++i) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
        if (n <= 0) return true;  // EOF or reset
      }
    }
    return false;
  }
  // Everything the server sends until it closes the connection.
  std::string read_all() const {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd_, buffer, sizeof(buffer), 0)) > 0) out.append(buffer, size_t(n));
    return out;
  }

 private:
  int fd_;
};

TEST_CASE("idle and half-sent connections, more than the workers, do not hold up a request") {
  Serving server({.workers = 2, .request_timeout_s = 600, .max_connections_per_address = 1000});
  std::vector<std::unique_ptr<Raw>> idle, slow;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<Raw>(server.port()));
    slow.push_back(std::make_unique<Raw>(server.port()));
    slow.back()->send_text("GET / HTTP/1.1\r\nHo");
  }
  auto client = server.client();
  for (int i = 0; i < 3; ++i) {
    auto res = client.Get("/");
    REQUIRE(res);
    CHECK(res->body == "hello");
  }
  // Served while all 40 were still held open, with 2 workers.
  for (const auto& c : idle) CHECK(c->open());
  for (const auto& c : slow) CHECK(c->open());
}

TEST_CASE("a client that never reads its answer holds up no one, however large the answer") {
  Serving server({.workers = 1, .write_timeout_s = 600}, 32 << 20);
  Raw stuck(server.port(), 4096);
  stuck.send_text("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  auto client = server.client();
  for (int i = 0; i < 3; ++i) {
    auto res = client.Get("/");
    REQUIRE(res);
    CHECK(res->body == "hello");
  }
  // Its 32 MiB are still mostly unsent (it reads none): another client gets them in full.
  auto other = server.client();
  auto big = other.Get("/big");
  REQUIRE(big);
  CHECK(big->body.size() == size_t{32} << 20);
}

TEST_CASE("beyond the cap per address, the address's oldest waiting connection is closed") {
  Serving server({.request_timeout_s = 600, .max_connections_per_address = 4});
  std::vector<std::unique_ptr<Raw>> held;
  for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<Raw>(server.port()));
  auto client = server.client();  // a fifth: the oldest idle one makes room
  auto res = client.Get("/");
  REQUIRE(res);
  CHECK(res->body == "hello");
  CHECK(held[0]->closed_by_server());
  CHECK(held[3]->open());
}

TEST_CASE("a request head that does not arrive within the timeout closes its connection") {
  Serving server({.request_timeout_s = 0.3});
  Raw idle(server.port());
  Raw slow(server.port());
  slow.send_text("GET / HT");
  CHECK(idle.closed_by_server());
  CHECK(slow.closed_by_server());
}

TEST_CASE("keep-alive and pipelined requests are answered in order; a body is refused") {
  Serving server({});
  Raw pipelined(server.port());
  pipelined.send_text(
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string both = pipelined.read_all();
  CHECK(both.find("hello") != both.rfind("hello"));  // two answers
  CHECK(both.find("Connection: keep-alive") < both.find("Connection: close"));

  Raw post(server.port());
  post.send_text("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(post.read_all().starts_with("HTTP/1.1 405"));
}

}  // namespace
}  // namespace tune::dashboard::internal
