// Each launched rank's own CURVE keys (tune/channel/rank_keys.h): the control channel
// lets a key speak only for the rank it was issued to, and only while that
// rank's group lives. Real CURVE connections over loopback; no worker.
#include "tune/channel/rank_keys.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <set>
#include <thread>
#include <zmq.hpp>

#include "core/protocol.h"
#include "test_util.h"
#include "train/channel_keys.h"
#include "train/worker_env.h"

using namespace tune;

namespace {

using namespace std::chrono_literals;

// What the channel passed on and what it rejected.
struct Seen {
  std::vector<std::pair<std::string, protocol::Message>> messages;  // routing id, message
  std::vector<std::string> rejected;
};

// Drains `channel` until `events` messages or rejections came, or `limit` passed.
Seen drain_until(ControlChannel& channel, size_t events,
                 std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  Seen seen;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (seen.messages.size() + seen.rejected.size() < events &&
         std::chrono::steady_clock::now() < end) {
    zmq::pollitem_t item{channel.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 20ms);
    channel.drain(
        100,
        [&](const std::string& id, const Peer*, protocol::Message& m) {
          seen.messages.emplace_back(id, m);
        },
        [&](const std::string&, const Peer*, const std::string& why) {
          seen.rejected.push_back(why);
        });
  }
  return seen;
}

// Waits until the channel logged a refusal, at most 5 s.
std::vector<std::string> refusals(ControlChannel& channel) {
  std::vector<std::string> all;
  test::eventually(
      [&] {
        for (auto& refusal : channel.take_refusals()) all.push_back(refusal.why);
        return !all.empty();
      },
      5);
  return all;
}

struct Client {
  zmq::socket_t socket;
  Client(zmq::context_t& ctx, const ControlChannel& channel, const std::string& server_key,
         const train::CurveKeypair& keys)
      : socket(ctx, zmq::socket_type::dealer) {
    socket.set(zmq::sockopt::linger, 0);
    train::make_curve_client(socket, server_key, keys);
    socket.connect(channel.endpoint());
  }
  void send(const protocol::Message& message) {
    socket.send(zmq::buffer(protocol::encode(message)), zmq::send_flags::none);
  }
};

// A launcher that starts nothing: it records what it was asked.
class FakeGroup final : public LaunchedGroup {
 public:
  explicit FakeGroup(int size) : exits_(size) {}
  int size() const override { return static_cast<int>(exits_.size()); }
  int64_t pid(int) const override { return 0; }
  std::vector<int> exit_fds() const override { return {}; }
  std::vector<RankExit> reap() override { return {}; }
  const std::optional<ExitStatus>& exit_status(int rank) const override { return exits_.at(rank); }
  void signal(int) override {}
  void kill_and_wait() override {}

 private:
  std::vector<std::optional<ExitStatus>> exits_;
};

class FakeLauncher final : public Launcher {
 public:
  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override {
    launched.push_back(launch);
    return std::make_unique<FakeGroup>(static_cast<int>(launch.ranks.size()));
  }
  std::vector<GroupLaunch> launched;
};

// The key file of `rank` that the launch told its ranks of.
std::filesystem::path key_file(const GroupLaunch& launch, int rank) {
  const std::string prefix = std::string(train::kEnvCurveKeyFile) + "=";
  for (const auto& var : launch.env) {
    if (!var.starts_with(prefix)) continue;
    std::string path = var.substr(prefix.size());
    const auto at = path.find("%t");
    REQUIRE(at != std::string::npos);
    return path.replace(at, 2, std::to_string(rank));
  }
  FAIL("no key file in the launch's environment");
  return {};
}

GroupLaunch two_ranks(const std::string& trial_id, int attempt) {
  GroupLaunch launch;
  launch.trial_id = trial_id;
  launch.attempt = attempt;
  launch.ranks.resize(2);
  return launch;
}

struct Fixture {
  test::ScratchDir dir;
  zmq::context_t ctx;
  ChannelKeys keys = make_channel_keys(dir.path());
  ControlChannel channel{ctx, "tcp://127.0.0.1:*", keys};
  FakeLauncher inner;
  KeyedLauncher launcher{inner, channel, keys.dir};
};

}  // namespace

TEST_CASE("each launched rank gets a keypair of its own, in a 0600 file named through %t") {
  Fixture f;
  auto group = f.launcher.launch(two_ranks("t_00000", 0));
  REQUIRE(f.inner.launched.size() == 1);
  const auto& launch = f.inner.launched[0];
  const auto rank0 = key_file(launch, 0);
  const auto rank1 = key_file(launch, 1);
  for (const auto& file : {rank0, rank1}) {
    CHECK((std::filesystem::status(file).permissions() & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  }
  // Their folders too are the owner's alone, as the keys folder is.
  for (const auto& folder : {f.keys.dir, rank0.parent_path()}) {
    CHECK((std::filesystem::status(folder).permissions() & std::filesystem::perms::all) ==
          std::filesystem::perms::owner_all);
  }
  CHECK(train::read_keypair(rank0).public_key != train::read_keypair(rank1).public_key);
  // The next group's keys are others again.
  auto next = f.launcher.launch(two_ranks("t_00001", 0));
  CHECK(train::read_keypair(key_file(f.inner.launched[1], 0)).public_key !=
        train::read_keypair(rank0).public_key);
}

TEST_CASE("a rank's key says HELLO only as that rank and beats count only from its key") {
  Fixture f;
  auto group = f.launcher.launch(two_ranks("t_00000", 0));
  const auto launch = f.inner.launched[0];
  const train::CurveKeypair a = train::read_keypair(key_file(launch, 0));
  const train::CurveKeypair b = train::read_keypair(key_file(launch, 1));
  const std::string server = f.keys.controller.public_key;

  Client as_a(f.ctx, f.channel, server, a);
  as_a.send(protocol::Hello{"t_00000", 1, 0, 42});  // rank 0's key, rank 1's name
  as_a.send(protocol::Hello{"t_00000", 0, 1, 42});  // another attempt
  as_a.send(protocol::Hello{"t_00001", 0, 0, 42});  // another trial
  Seen seen = drain_until(f.channel, 3);
  CHECK(seen.messages.empty());
  REQUIRE(seen.rejected.size() == 3);
  CHECK(seen.rejected[0] ==
        "HELLO as rank 1 of trial t_00000 attempt 0 from a connection whose key was not issued "
        "to that rank");

  as_a.send(protocol::Hello{"t_00000", 0, 0, 42});
  seen = drain_until(f.channel, 1);
  REQUIRE(seen.messages.size() == 1);
  CHECK(std::get<protocol::Hello>(seen.messages[0].second).rank == 0);
  const std::string a_route = seen.messages[0].first;
  f.channel.bind_peer(a_route, {"t_00000", 0});

  // Rank 1's beats do not count for rank 0; rank 0's own second connection's do.
  Client as_b(f.ctx, f.channel, server, b);
  as_b.send(protocol::Heartbeat{"t_00000", 0, 0});
  as_b.send(protocol::Heartbeat{"t_00000", 1, 0});  // its own rank, not bound: passes, after
  seen = drain_until(f.channel, 1);
  CHECK(seen.rejected.empty());
  REQUIRE(seen.messages.size() == 1);
  CHECK(std::get<protocol::Heartbeat>(seen.messages[0].second).rank == 1);
  Client a_beats(f.ctx, f.channel, server, a);
  a_beats.send(protocol::Heartbeat{"t_00000", 0, 0});
  seen = drain_until(f.channel, 1);
  CHECK(seen.rejected.empty());
  REQUIRE(seen.messages.size() == 1);
  CHECK(std::holds_alternative<protocol::Heartbeat>(seen.messages[0].second));
}

TEST_CASE("the keys of a group that is gone are refused, and their files removed") {
  Fixture f;
  auto group = f.launcher.launch(two_ranks("t_00000", 0));
  const auto file = key_file(f.inner.launched[0], 0);
  const train::CurveKeypair a = train::read_keypair(file);
  const std::string server = f.keys.controller.public_key;
  {
    Client live(f.ctx, f.channel, server, a);
    live.send(protocol::Hello{"t_00000", 0, 0, 42});
    CHECK(drain_until(f.channel, 1).messages.size() == 1);
  }
  group.reset();
  CHECK_FALSE(std::filesystem::exists(file));
  CHECK_FALSE(std::filesystem::exists(file.parent_path()));

  Client late(f.ctx, f.channel, server, a);
  late.send(protocol::Hello{"t_00000", 0, 0, 42});
  const auto why = refusals(f.channel);
  REQUIRE(why.size() >= 1);
  CHECK(why[0].find("presented CURVE key " + a.public_key) != std::string::npos);
  const Seen seen = drain_until(f.channel, 1, std::chrono::milliseconds(300));
  CHECK(seen.messages.empty());
  CHECK(seen.rejected.empty());
}

TEST_CASE("each refused peer is named by its address, even when the reasons are the same") {
  Fixture f;
  const std::string port = f.channel.endpoint().substr(f.channel.endpoint().rfind(':') + 1);
  // Two outsiders holding keys of their own, from two loopback addresses.
  std::vector<std::unique_ptr<zmq::socket_t>> outsiders;
  for (const char* from : {"127.0.0.2", "127.0.0.3"}) {
    auto socket = std::make_unique<zmq::socket_t>(f.ctx, zmq::socket_type::dealer);
    socket->set(zmq::sockopt::linger, 0);
    train::make_curve_client(*socket, f.keys.controller.public_key, train::make_curve_keypair());
    socket->connect(fmt::format("tcp://{}:0;127.0.0.1:{}", from, port));
    socket->send(zmq::buffer(protocol::encode(protocol::Hello{"t_00000", 0, 0, 42})),
                 zmq::send_flags::none);
    outsiders.push_back(std::move(socket));
  }
  std::set<std::string> addresses;
  test::eventually(
      [&] {
        for (const auto& refusal : f.channel.take_refusals()) {
          CHECK(refusal.why.find("not one issued to a live rank") != std::string::npos);
          CHECK_FALSE(refusal.ended_group);
          addresses.insert(refusal.address);
        }
        return addresses.size() == 2;
      },
      5);
  CHECK(addresses == std::set<std::string>{"127.0.0.2", "127.0.0.3"});
  CHECK(drain_until(f.channel, 1, std::chrono::milliseconds(300)).messages.empty());
}

TEST_CASE(
    "a spare group's keys speak for its serial and its ranks keep them for the trial it takes") {
  Fixture f;
  auto group = f.launcher.launch(two_ranks(train::kSpareTrialId, 3));
  const train::CurveKeypair a = train::read_keypair(key_file(f.inner.launched[0], 0));
  Client spare(f.ctx, f.channel, f.keys.controller.public_key, a);
  spare.send(protocol::Hello{train::kSpareTrialId, 0, 2, 42});  // another spare's serial
  spare.send(protocol::Hello{train::kSpareTrialId, 0, 3, 42});
  Seen seen = drain_until(f.channel, 2);
  REQUIRE(seen.rejected.size() == 1);
  REQUIRE(seen.messages.size() == 1);
  // Adopted by a trial: its connection (and key) now speak for that trial's rank.
  f.channel.bind_peer(seen.messages[0].first, {"t_00004", 0});
  spare.send(protocol::Report{1, {{"accuracy", 1.0}}, 0, 0});
  Client beats(f.ctx, f.channel, f.keys.controller.public_key, a);
  beats.send(protocol::Heartbeat{"t_00004", 0, 1});
  seen = drain_until(f.channel, 2);
  CHECK(seen.rejected.empty());
  CHECK(seen.messages.size() == 2);
}
