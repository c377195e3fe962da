#include "dashboard/internal/event_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/errors.h"

namespace tune::dashboard::internal {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = ~uint64_t{0};
constexpr int kTickMs = 100;  // how often deadlines are checked
// After an answer that closes the connection, what the peer still sends is
// read and dropped this long: closing with unread input would reset the
// connection and could destroy the answer before the peer reads it.
constexpr auto kLinger = std::chrono::seconds(2);

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string peer_address(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, text, sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, text, sizeof(text));
  }
  return text;
}

}  // namespace

struct EventServer::Loop {
  enum class State {
    kReading,  // waiting for (the rest of) a request head
    kWorking,  // a worker computes the answer
    kWriting,  // sending the answer
    kClosing,  // answered and shut down for writing; dropping input until the peer closes
  };
  struct Connection {
    uint64_t id = 0;
    int fd = -1;
    std::string address;
    State state = State::kReading;
    std::string in;  // bytes received and not yet parsed
    std::string head;
    std::shared_ptr<const std::string> body;
    size_t sent = 0;  // of head + body
    bool keep_alive = false;
    Clock::time_point deadline;
  };
  struct Job {
    uint64_t id;
    HttpRequest request;
  };
  struct Done {
    uint64_t id;
    HttpResponse response;
    bool keep_alive;
  };

  explicit Loop(EventServer& server) : server(server), options(server.options_) {}

  EventServer& server;
  const EventServerOptions& options;
  int epoll_fd = -1;
  std::map<uint64_t, Connection> connections;  // by id: oldest first
  std::map<std::string, size_t> per_address;
  uint64_t next_id = 1;

  std::mutex mutex;  // guards jobs, done and quit
  std::condition_variable work;
  std::deque<Job> jobs;
  std::deque<Done> done;
  bool quit = false;
  std::vector<std::thread> workers;

  void watch(const Connection& c, uint32_t events, int op = EPOLL_CTL_MOD) {
    epoll_event event{};
    event.events = events;
    event.data.u64 = c.id;
    epoll_ctl(epoll_fd, op, c.fd, &event);
  }

  void close_connection(uint64_t id) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->second.fd, nullptr);
    ::close(it->second.fd);
    if (--per_address[it->second.address] == 0) per_address.erase(it->second.address);
    connections.erase(it);
  }

  // Closes the oldest connection waiting for a request, of `address` (or of
  // any when empty). False when there is none to close.
  bool evict(const std::string& address) {
    for (auto& [id, c] : connections) {
      if ((address.empty() || c.address == address) &&
          (c.state == State::kReading || c.state == State::kClosing)) {
        close_connection(id);
        return true;
      }
    }
    return false;
  }

  void accept_all() {
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof(addr);
      const int fd = accept4(server.listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a connection that died in the queue
      const std::string address = peer_address(addr);
      const bool room =
          (per_address[address] < options.max_connections_per_address || evict(address)) &&
          (connections.size() < options.max_connections || evict(""));
      if (per_address[address] == 0) per_address.erase(address);
      if (!room) {
        ::close(fd);
        continue;
      }
      int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      Connection& c = connections[next_id];
      c.id = next_id++;
      c.fd = fd;
      c.address = address;
      c.deadline = Clock::now() + seconds(options.request_timeout_s);
      ++per_address[address];
      watch(c, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
    }
  }

  // Reads what the peer sent; false when the connection was closed.
  bool receive(Connection& c) {
    char buffer[16384];
    while (true) {
      const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        if (c.state != State::kClosing) c.in.append(buffer, static_cast<size_t>(n));
        if (c.in.size() > 2 * kMaxRequestHead) return true;  // parse() refuses it
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      close_connection(c.id);  // the peer closed, or the connection broke
      return false;
    }
  }

  void answer_now(Connection& c, HttpResponse response, bool keep_alive) {
    c.head = response_head(response, keep_alive);
    c.body = std::move(response.body);
    c.sent = 0;
    c.keep_alive = keep_alive;
    c.state = State::kWriting;
    c.deadline = Clock::now() + seconds(options.write_timeout_s);
    watch(c, EPOLLOUT);
    send_some(c);
  }

  // Hands the next complete request in c.in to a worker, or answers a bad one.
  void parse(Connection& c) {
    if (c.state != State::kReading) return;
    HttpRequest request;
    size_t head_size = 0;
    switch (parse_request_head(c.in, request, head_size)) {
      case ParseResult::kIncomplete:
        return;
      case ParseResult::kBad:
        return answer_now(c, HttpResponse::text(400, "400: malformed request\n"), false);
      case ParseResult::kTooLarge:
        return answer_now(c, HttpResponse::text(431, "431: request head too large\n"), false);
      case ParseResult::kComplete:
        break;
    }
    c.in.erase(0, head_size);
    if (request.has_body) {
      // Read-only: a body is never read, so the connection cannot go on.
      return answer_now(c, HttpResponse::text(405, "405: this dashboard is read-only\n"), false);
    }
    c.state = State::kWorking;
    watch(c, 0);
    {
      std::lock_guard lock(mutex);
      jobs.push_back({c.id, std::move(request)});
    }
    work.notify_one();
  }

  void send_some(Connection& c) {
    const size_t total = c.head.size() + (c.body ? c.body->size() : 0);
    while (c.sent < total) {
      iovec parts[2];
      int count = 0;
      if (c.sent < c.head.size()) {
        parts[count++] = {c.head.data() + c.sent, c.head.size() - c.sent};
      }
      if (c.body && !c.body->empty()) {
        const size_t from = c.sent > c.head.size() ? c.sent - c.head.size() : 0;
        parts[count++] = {const_cast<char*>(c.body->data()) + from, c.body->size() - from};
      }
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = static_cast<size_t>(count);
      const ssize_t n = sendmsg(c.fd, &message, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
        c.deadline = Clock::now() + seconds(options.write_timeout_s);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // EPOLLOUT resumes it
      if (n < 0 && errno == EINTR) continue;
      return close_connection(c.id);
    }
    c.head.clear();
    c.body.reset();
    if (c.keep_alive && !server.stopping_) {
      c.state = State::kReading;
      c.deadline = Clock::now() + seconds(options.request_timeout_s);
      watch(c, EPOLLIN | EPOLLRDHUP);
      return parse(c);  // a request sent right behind the last one
    }
    shutdown(c.fd, SHUT_WR);
    c.state = State::kClosing;
    c.in.clear();
    c.deadline = Clock::now() + kLinger;
    watch(c, EPOLLIN | EPOLLRDHUP);
  }

  void on_event(uint64_t id, uint32_t events) {
    auto it = connections.find(id);
    if (it == connections.end()) return;  // closed earlier in this batch
    Connection& c = it->second;
    if (events & EPOLLERR) return close_connection(id);
    // Gone both ways while its answer is computed: nobody is left to read it.
    if ((events & EPOLLHUP) && c.state == State::kWorking) return close_connection(id);
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
      if (c.state == State::kWorking) return;  // its answer comes first
      if (!receive(c)) return;
      parse(c);
    }
    if ((events & EPOLLOUT) && c.state == State::kWriting) send_some(c);
  }

  void take_answers() {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = read(server.wake_fd_, &count, sizeof(count));
    std::deque<Done> finished;
    {
      std::lock_guard lock(mutex);
      finished.swap(done);
    }
    for (Done& d : finished) {
      auto it = connections.find(d.id);
      if (it == connections.end()) continue;  // the peer left while it was computed
      answer_now(it->second, std::move(d.response), d.keep_alive);
    }
  }

  void expire() {
    const auto now = Clock::now();
    std::vector<uint64_t> late;
    for (const auto& [id, c] : connections) {
      if (c.state != State::kWorking && now >= c.deadline) late.push_back(id);
    }
    for (uint64_t id : late) close_connection(id);
  }

  void work_loop() {
    while (true) {
      Job job;
      {
        std::unique_lock lock(mutex);
        work.wait(lock, [&] { return quit || !jobs.empty(); });
        if (quit) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      HttpResponse response;
      try {
        response = server.handler_(job.request);
      } catch (const std::exception& e) {
        response = HttpResponse::text(500, fmt::format("500: {}\n", e.what()));
      } catch (...) {
        response = HttpResponse::text(500, "500: unknown error\n");
      }
      {
        std::lock_guard lock(mutex);
        done.push_back({job.id, std::move(response), job.request.keep_alive()});
      }
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = write(server.wake_fd_, &one, sizeof(one));
    }
  }

  void run() {
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) throw Error(fmt::format("epoll_create1: {}", std::strerror(errno)));
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = kListenId;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, server.listen_fd_, &event);
    event.data.u64 = kWakeId;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, server.wake_fd_, &event);
    for (int i = 0; i < std::max(1, options.workers); ++i) {
      workers.emplace_back([this] { work_loop(); });
    }
    epoll_event events[64];
    auto next_check = Clock::now();
    while (!server.stopping_) {
      const int n = epoll_wait(epoll_fd, events, 64, kTickMs);
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == kListenId) {
          accept_all();
        } else if (id == kWakeId) {
          take_answers();
        } else {
          on_event(id, events[i].events);
        }
      }
      if (Clock::now() >= next_check) {
        expire();
        next_check = Clock::now() + std::chrono::milliseconds(kTickMs);
      }
    }
    {
      std::lock_guard lock(mutex);
      quit = true;
    }
    work.notify_all();
    for (auto& w : workers) w.join();
    while (!connections.empty()) close_connection(connections.begin()->first);
    ::close(epoll_fd);
  }
};

EventServer::EventServer(EventServerOptions options, HttpHandler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw Error(fmt::format("eventfd: {}", std::strerror(errno)));
}

EventServer::~EventServer() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_fd_);
}

int EventServer::bind() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  if (const int rc = getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw Error(fmt::format("cannot bind {}: {}", options_.host, gai_strerror(rc)));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    // SO_REUSEADDR allows a quick restart; not SO_REUSEPORT, which would let
    // a second dashboard share the port silently.
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, options_.backlog) == 0) {
      listen_fd_ = fd;
    } else {
      error = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    throw Error(fmt::format("cannot bind {}:{}: {}", options_.host, options_.port, error));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(addr).sin6_port
                                          : reinterpret_cast<sockaddr_in&>(addr).sin_port);
}

void EventServer::serve() {
  if (listen_fd_ < 0) throw Error("EventServer::serve before bind");
  loop_ = std::make_unique<Loop>(*this);
  loop_->run();
  loop_.reset();
}

void EventServer::stop() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof(one));
}

}  // namespace tune::dashboard::internal
