// benchmarks/scale: the controller's bookkeeping per trial and per peer at
// 1,000 trials x 4 ranks. A cost linear in the peers paid for every message
// or every group's end is quadratic over a run: each figure is that cost
// at 4,000 peers beside the same at 400, whose ratio says how it grows.
//
//   the peer book (tune/channel/peer_book.h): a group's end (its ranks unbound and
//     their keys revoked) and a new group's HELLOs, with the book full;
//   the control channel's outbox: a rank unbound with a turn's decisions queued;
//   the worker groups (tune/launch/worker_groups.h): what each loop turn asks of
//     them (the exits ready, the deadlines), and the poll of their one
//     exit descriptor.
#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <zmq.hpp>

#include "benchmarks/scale/figure.h"
#include "tune/channel/peer_book.h"
#include "tune/channel/router.h"
#include "tune/launch/worker_groups.h"

namespace scale {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRanks = 4;

std::string key_of(int trial, int rank) { return fmt::format("key-{:06d}-{}", trial, rank); }
std::string routing_of(int trial, int rank, int generation) {
  return fmt::format("peer-{:06d}-{}-{}", trial, rank, generation);
}
std::string trial_of(int trial) { return fmt::format("scale_{:05d}", trial); }

// Seconds per group end + new group in a book holding `trials` x kRanks peers.
double book_turnover_us(int trials, int rounds) {
  tune::PeerBook book;
  auto join = [&](int t, int generation) {
    for (int r = 0; r < kRanks; ++r) {
      const std::string key = key_of(t, r), routing = routing_of(t, r, generation);
      book.issue(key, trial_of(t), generation, r);
      (void)book.check_key(routing, key, tune::protocol::Hello{trial_of(t), r, generation});
      book.bind(routing, {trial_of(t), r});
    }
  };
  for (int t = 0; t < trials; ++t) join(t, 0);
  const auto start = Clock::now();
  for (int i = 0; i < rounds; ++i) {
    const int t = i % trials, generation = i / trials;
    for (int r = 0; r < kRanks; ++r) {
      book.unbind(routing_of(t, r, generation));
      book.revoke(key_of(t, r));
    }
    join(t, generation + 1);
  }
  return seconds_since(start) * 1e6 / rounds;
}

// Microseconds per unbind_peer with one queued decision per peer.
double outbox_unbind_us(int trials, const std::filesystem::path& dir) {
  zmq::context_t context(1);
  tune::ControlChannel channel(context, "tcp://127.0.0.1:*", tune::make_channel_keys(dir));
  const tune::protocol::DecisionMsg decision{};
  for (int t = 0; t < trials; ++t) {
    for (int r = 0; r < kRanks; ++r) channel.queue(routing_of(t, r, 0), decision);
  }
  // A tenth of the trials end in the turn: their ranks are unbound.
  const int ending = std::max(1, trials / 10);
  const auto start = Clock::now();
  for (int t = 0; t < ending; ++t) {
    for (int r = 0; r < kRanks; ++r) channel.unbind_peer(routing_of(t, r, 0));
  }
  const double us = seconds_since(start) * 1e6 / (ending * kRanks);
  (void)channel.flush();  // to no one: nothing is connected
  return us;
}

// A group whose ranks never exit, each with an exit descriptor of its own.
class IdleGroup final : public tune::LaunchedGroup {
 public:
  explicit IdleGroup(int ranks) {
    for (int r = 0; r < ranks; ++r) fds_.push_back(eventfd(0, EFD_CLOEXEC));
  }
  ~IdleGroup() override {
    for (int fd : fds_) close(fd);
  }
  int size() const override { return static_cast<int>(fds_.size()); }
  int64_t pid(int) const override { return 0; }
  std::vector<int> exit_fds() const override { return fds_; }
  std::vector<tune::RankExit> reap() override { return {}; }
  const std::optional<tune::ExitStatus>& exit_status(int) const override { return none_; }
  void signal(int) override {}
  void kill_and_wait() override {}

 private:
  std::vector<int> fds_;
  std::optional<tune::ExitStatus> none_;
};

class IdleLauncher final : public tune::Launcher {
 public:
  std::unique_ptr<tune::LaunchedGroup> launch(const tune::GroupLaunch& launch) override {
    return std::make_unique<IdleGroup>(static_cast<int>(launch.ranks.size()));
  }
};

struct TurnCost {
  double groups_us = 0;  // the exits ready, check_deadlines, next_deadline
  double poll_us = 0;    // zmq::poll of the exit descriptor, none ready
};

// What one loop turn asks of WorkerGroups holding `trials` groups of kRanks.
TurnCost turn_cost(int trials, int turns) {
  IdleLauncher launcher;
  tune::WorkerGroups groups(launcher, {.heartbeat_timeout_s = 1e9});
  tune::GroupLaunch launch;
  launch.ranks.resize(kRanks);
  for (int t = 0; t < trials; ++t) groups.start(trial_of(t), 0, 0, {}, launch);
  TurnCost cost;
  for (int i = 0; i < turns; ++i) {
    const auto start = Clock::now();
    (void)groups.exited();
    (void)groups.check_deadlines(groups.now());
    (void)groups.next_deadline(groups.now() + std::chrono::seconds(1));
    cost.groups_us += seconds_since(start) * 1e6;
    zmq::pollitem_t item{nullptr, groups.exit_fd(), ZMQ_POLLIN, 0};
    const auto polled = Clock::now();
    zmq::poll(&item, 1, std::chrono::milliseconds(0));
    cost.poll_us += seconds_since(polled) * 1e6;
  }
  cost.groups_us /= turns;
  cost.poll_us /= turns;
  return cost;
}

std::string growth(double small, double large) {
  return fmt::format("{:.1f} -> {:.1f} us ({:.1f}x for 10x peers)", small, large, large / small);
}

}  // namespace

std::vector<Figure> peer_figures(const Options& options) {
  const int small = 100, large = 1000;
  const int rounds = options.quick ? 2000 : 20000;
  std::vector<Figure> out;
  const double book_small = book_turnover_us(small, rounds);
  const double book_large = book_turnover_us(large, rounds);
  out.push_back({"peer book: a group's end and a new group's HELLOs, 400 -> 4,000 peers",
                 growth(book_small, book_large), "flat (< 2x)", book_large < 2 * book_small});
  const double outbox_small = outbox_unbind_us(small, options.dir / "keys_small");
  const double outbox_large = outbox_unbind_us(large, options.dir / "keys_large");
  out.push_back({"control channel: a rank unbound, a decision queued per peer, 400 -> 4,000",
                 growth(outbox_small, outbox_large), "flat (< 2x)",
                 outbox_large < 2 * outbox_small});
  const int turns = options.quick ? 200 : 2000;
  const TurnCost turn_small = turn_cost(small, turns);
  const TurnCost turn_large = turn_cost(large, turns);
  out.push_back({"worker groups: a loop turn's exits and deadlines, 400 -> 4,000 ranks",
                 growth(turn_small.groups_us, turn_large.groups_us),
                 "",
                 {}});
  out.push_back({"event loop: poll of the ranks' exits (one epoll fd), none ready, 400 -> 4,000",
                 growth(turn_small.poll_us, turn_large.poll_us),
                 "",
                 {}});
  return out;
}

}  // namespace scale
