// The controller against real worker processes (the tunerun binary in
// worker mode), checked through the experiment database as a user would.
#include "tune/execution/controller.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <zmq.hpp>

#include "core/protocol.h"
#include "curve_experiment.h"
#include "sqlite_query.h"
#include "storage/experiment_store.h"
#include "test_util.h"
#include "train/channel_keys.h"

using namespace tune;

namespace {

ExperimentSpec curve_spec(const test::ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec = test::curve(dir, name);
  spec.param_space.set("speed", grid_search({0.1, 0.3}));
  spec.param_space.set("iterations", 8);
  return spec;
}

ExperimentSummary run(const ExperimentSpec& spec, ControllerOptions options = {}) {
  options.worker_argv = {TUNERUN_BINARY};
  options.verbosity = 0;
  TrialController controller(spec, options);
  return controller.run();
}

storage::ExperimentStore open_store(const ExperimentSpec& spec) {
  return storage::ExperimentStore::open_read_only(spec.experiment_dir());
}

// Whether the controller answered a socket's handshake, accepting or refusing it.
class HandshakeAnswer final : public zmq::monitor_t {
 public:
  bool answered = false;

 private:
  void on_event_handshake_succeeded(const zmq_event_t&, const char*) override { answered = true; }
  void on_event_handshake_failed_auth(const zmq_event_t&, const char*) override {
    answered = true;
  }
  void on_event_handshake_failed_protocol(const zmq_event_t&, const char*) override {
    answered = true;
  }
  void on_event_handshake_failed_no_detail(const zmq_event_t&, const char*) override {
    answered = true;
  }
  void on_event_disconnected(const zmq_event_t&, const char*) override { answered = true; }
};

// Connects `socket` to `endpoint` and sends HELLO as `trial_id`'s rank 0,
// then a well-formed report of a perfect result; returns once the
// controller answered the handshake (fails after 10 s without): a refused
// peer is counted by then, an accepted one's messages are sent (within the
// socket's linger once it closes).
void pretend_rank_0(zmq::socket_t& socket, const std::string& endpoint,
                    const std::string& trial_id) {
  static std::atomic<int> monitors{0};
  HandshakeAnswer answer;
  answer.init(socket, fmt::format("inproc://pretend_rank_0_{}", monitors++));
  socket.connect(endpoint);
  socket.send(zmq::buffer(protocol::encode(protocol::Hello{trial_id, 0, 0, 1})),
              zmq::send_flags::none);
  socket.send(zmq::buffer(protocol::encode(protocol::Report{1, {{"accuracy", 99.0}}, 0, 0})),
              zmq::send_flags::none);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!answer.answered && std::chrono::steady_clock::now() < end) answer.check_event(100);
  CHECK_MESSAGE(answer.answered, "the controller never answered the handshake");
}

// The keypair of rank 0 of the first group launched (tune/channel/rank_keys.h), read
// as soon as its file is whole; throws after 30 s without it.
train::CurveKeypair first_rank_key(const ExperimentSpec& spec) {
  const auto file = spec.experiment_dir() / "keys" / "group_1" / "rank_0.key";
  train::CurveKeypair keys;
  const bool read = test::eventually(
      [&] {
        try {
          keys = train::read_keypair(file);
          return true;
        } catch (const Error&) {
          return false;  // not written yet, or not whole
        }
      },
      30);
  return read ? keys : train::read_keypair(file);
}

}  // namespace

TEST_CASE("two-rank trials report every iteration once and stop at the criterion") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "two_ranks");
  spec.trainable.num_workers = 2;
  spec.stop = {{"training_iteration", 5, StopCriterion::Comparison::kAtLeast}};

  ExperimentSummary summary = run(spec);
  CHECK(summary.num_trials == 2);
  CHECK(summary.num_terminated == 2);
  CHECK(summary.num_results == 10);

  auto store = open_store(spec);
  for (const auto& trial : store.trials()) {
    CHECK(trial.status == TrialStatus::kTerminated);
    CHECK(trial.status_reason.find("training_iteration >= 5") != std::string::npos);
    CHECK(trial.last_iteration == 5);
    auto results = store.results(trial.trial_id);
    REQUIRE(results.size() == 5);
    for (size_t i = 0; i < results.size(); ++i) {
      CHECK(results[i].training_iteration == static_cast<int64_t>(i + 1));
      const double expected =
          0.9 * (1 - std::exp(-trial.config["speed"].get<double>() * static_cast<double>(i + 1)));
      CHECK(results[i].metrics["accuracy"].get<double>() == doctest::Approx(expected));
    }
    CHECK(std::filesystem::exists(std::filesystem::path(trial.trial_dir) / "rank_0.log"));
    CHECK(std::filesystem::exists(std::filesystem::path(trial.trial_dir) / "rank_1.log"));
  }
  REQUIRE(summary.best);
  CHECK(summary.best->config["speed"] == 0.3);  // the faster curve is ahead at iteration 5
}

TEST_CASE("a raising train function ends its trial in ERROR with the message, others go on") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "raises");
  spec.param_space.set("fail_at", grid_search({0, 3}));  // 0: never

  ExperimentSummary summary = run(spec);
  CHECK(summary.num_trials == 4);
  CHECK(summary.num_terminated == 2);
  CHECK(summary.num_errors == 2);
  auto store = open_store(spec);
  for (const auto& trial : store.trials()) {
    const auto results = store.results(trial.trial_id);
    if (trial.config["fail_at"] == 3) {
      CHECK(trial.status == TrialStatus::kError);
      CHECK(trial.error.find("injected failure at iteration 3") != std::string::npos);
      CHECK(trial.error.find("rank 0") != std::string::npos);
      CHECK(results.size() == 2);  // iterations before the failure are kept
    } else {
      CHECK(trial.status == TrialStatus::kTerminated);
      CHECK(results.size() == 8);
    }
  }
}

TEST_CASE("a rank that dies abnormally fails the trial with its exit status") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "crashes");
  spec.trainable.num_workers = 2;
  spec.param_space.set("speed", 0.1);
  spec.param_space.set("crash_at", 2);
  // Reports with a checkpoint wait for their decision, so iteration 1 is on
  // disk before the crash (a pipelined one could die with the process).
  spec.param_space.set("checkpoint_every", 1);

  ExperimentSummary summary = run(spec);
  CHECK(summary.num_errors == 1);
  auto trials = open_store(spec).trials();
  REQUIRE(trials.size() == 1);
  CHECK(trials[0].status == TrialStatus::kError);
  CAPTURE(trials[0].error);
  CHECK(trials[0].error.find("exited with code 3") != std::string::npos);
  CHECK(trials[0].last_iteration == 1);
}

TEST_CASE("max_concurrent_trials bounds the trials running at once") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "serial");
  spec.max_concurrent_trials = 1;
  spec.param_space.set("iterations", 3);
  spec.param_space.set("sleep_s", 0.02);
  spec.num_samples = 2;

  run(spec);
  auto trials = open_store(spec).trials();
  REQUIRE(trials.size() == 4);
  std::sort(trials.begin(), trials.end(),
            [](const auto& a, const auto& b) { return *a.started_at < *b.started_at; });
  for (size_t i = 1; i < trials.size(); ++i) {
    CHECK(*trials[i].started_at >= *trials[i - 1].finished_at);
  }
}

TEST_CASE("heartbeats keep a trial alive through steps longer than the timeout") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "slow_steps");
  spec.param_space.set("speed", 0.1);
  spec.param_space.set("iterations", 1);
  spec.param_space.set("sleep_s", 2.0);
  // A loaded machine may delay a beat by a second without failing the trial.
  spec.heartbeat_timeout_s = 1.5;
  spec.heartbeat_period_s = 0.1;

  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(summary.num_errors == 0);
}

// Outsiders' messages: in virtual time the channel is read only as the
// simulation lists what its ranks sent.
TEST_CASE("garbage and impostor messages are rejected and the experiment goes on" *
          doctest::skip(test::kVirtualTime)) {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "hostile");
  spec.param_space.set("sleep_s", 0.2);
  zmq::context_t ctx;
  std::thread attacker;
  ControllerOptions options;
  options.on_listen = [&](const std::string& endpoint) {
    // An insider: it holds the keys of a live rank, but is no rank.
    const auto keys = spec.experiment_dir() / "keys";
    const std::string server_key = train::read_keypair(keys / "controller.key").public_key;
    attacker = std::thread([&ctx, &spec, endpoint, server_key] {
      const train::CurveKeypair worker = first_rank_key(spec);
      zmq::socket_t socket(ctx, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 1000);
      train::make_curve_client(socket, server_key, worker);
      socket.connect(endpoint);
      socket.send(zmq::str_buffer("\xc1 not msgpack"), zmq::send_flags::none);
      socket.send(zmq::buffer(protocol::encode(protocol::Report{1, {{"accuracy", 1.0}}, 0, 0})),
                  zmq::send_flags::none);  // a report before HELLO
      socket.send(zmq::buffer(protocol::encode(protocol::Hello{"hostile_00000", 7, 0, 1})),
                  zmq::send_flags::none);  // a rank that does not exist
      socket.send(zmq::buffer(protocol::encode(protocol::Hello{"hostile_00000", 0, 0, 1})),
                  zmq::send_flags::none);  // a pid that is not the worker's
    });
  };
  ExperimentSummary summary = run(spec, options);
  attacker.join();
  CHECK(summary.rejected_messages == 4);
  CHECK(summary.refused_connections == 0);
  CHECK(summary.num_terminated == 2);
  CHECK(summary.num_results == 16);
}

TEST_CASE("peers without the experiment's CURVE keys are refused and nothing they send is stored") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "outsider");
  spec.param_space.set("sleep_s", 0.1);
  zmq::context_t ctx;
  std::vector<std::thread> attackers;
  auto pretend_rank = [](zmq::socket_t& socket, const std::string& endpoint) {
    pretend_rank_0(socket, endpoint, "outsider_00000");
  };
  ControllerOptions options;
  options.on_listen = [&](const std::string& endpoint) {
    // The controller's public key is no secret; a key pair of one's own is no credential.
    const auto keys = spec.experiment_dir() / "keys";
    CHECK((std::filesystem::status(keys / "controller.key").permissions() &
           std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    CHECK((std::filesystem::status(keys).permissions() & std::filesystem::perms::all) ==
          std::filesystem::perms::owner_all);
    const std::string server_key = train::read_keypair(keys / "controller.key").public_key;
    attackers.emplace_back([&, endpoint] {  // no CURVE at all
      zmq::socket_t socket(ctx, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 0);
      pretend_rank(socket, endpoint);
    });
    attackers.emplace_back([&, endpoint, server_key] {  // CURVE with keys of its own
      zmq::socket_t socket(ctx, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 0);
      train::make_curve_client(socket, server_key, train::make_curve_keypair());
      pretend_rank(socket, endpoint);
    });
  };
  ExperimentSummary summary = run(spec, options);
  for (auto& t : attackers) t.join();
  CHECK(summary.refused_connections >= 2);
  CHECK(summary.rejected_messages == 0);  // nothing reached the protocol
  CHECK(summary.num_terminated == 2);
  auto store = open_store(spec);
  for (const auto& trial : store.trials()) {
    auto results = store.results(trial.trial_id);
    REQUIRE(results.size() == 8);
    for (size_t i = 0; i < results.size(); ++i) {
      CHECK(results[i].training_iteration == static_cast<int64_t>(i + 1));
      CHECK(results[i].metrics["accuracy"].get<double>() < 99.0);
    }
  }
}

// Outsiders' messages: in virtual time the channel is read only as the
// simulation lists what its ranks sent.
TEST_CASE("a rank's key speaks only for that rank, and only while its group lives" *
          doctest::skip(test::kVirtualTime)) {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "keyed");
  spec.param_space.set("sleep_s", 0.1);
  spec.max_concurrent_trials = 1;  // trial 1 still runs when trial 0's group is gone
  zmq::context_t ctx;
  std::thread attacker;
  bool group_gone = false;
  ControllerOptions options;
  options.on_listen = [&](const std::string& endpoint) {
    const auto keys = spec.experiment_dir() / "keys";
    const std::string server_key = train::read_keypair(keys / "controller.key").public_key;
    attacker = std::thread([&, keys, endpoint, server_key] {
      // Trial 0's rank 0 key, used to speak for trial 1's rank 0.
      const train::CurveKeypair stolen = first_rank_key(spec);
      {
        zmq::socket_t socket(ctx, zmq::socket_type::dealer);
        socket.set(zmq::sockopt::linger, 1000);
        train::make_curve_client(socket, server_key, stolen);
        pretend_rank_0(socket, endpoint, "keyed_00001");
      }
      // Once trial 0's group is gone (its key folder removed), the key opens nothing.
      group_gone = test::eventually([&] { return !std::filesystem::exists(keys / "group_1"); }, 30);
      zmq::socket_t socket(ctx, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 0);
      train::make_curve_client(socket, server_key, stolen);
      pretend_rank_0(socket, endpoint, "keyed_00000");
    });
  };
  ExperimentSummary summary = run(spec, options);
  attacker.join();
  CHECK(group_gone);
  CHECK(summary.rejected_messages == 2);  // the HELLO as another rank, and its report
  CHECK(summary.refused_connections >= 1);
  CHECK(summary.num_terminated == 2);
  auto store = open_store(spec);
  for (const auto& trial : store.trials()) {
    auto results = store.results(trial.trial_id);
    REQUIRE(results.size() == 8);
    for (const auto& result : results) CHECK(result.metrics["accuracy"].get<double>() < 99.0);
  }
}

TEST_CASE("a trial needing more CPUs than exist is refused before anything is written") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "too_big");
  spec.trainable.num_workers = 3;
  CHECK_THROWS_WITH_AS(run(spec), doctest::Contains("needs 3 CPUs"), ConfigError);
  CHECK_FALSE(std::filesystem::exists(spec.experiment_dir()));
}

TEST_CASE("STRICT_SPREAD of two ranks is refused on one machine before anything is written" *
          doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "strict_spread");
  spec.trainable.num_workers = 2;
  spec.trainable.placement_strategy = PlacementStrategy::kStrictSpread;
  CHECK_THROWS_WITH_AS(run(spec), doctest::Contains("STRICT_SPREAD puts each of the 2 ranks"),
                       ConfigError);
  CHECK_FALSE(std::filesystem::exists(spec.experiment_dir()));
  // Every other strategy runs both ranks here.
  spec.trainable.placement_strategy = PlacementStrategy::kSpread;
  CHECK(run(spec).num_terminated == 2);
}

TEST_CASE("an elastic trial starts with the ranks that fit and grows at a checkpoint") {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "elastic");
  spec.total_cpus = 3;
  spec.trainable.min_workers = 1;
  spec.trainable.num_workers = 2;
  // The first trial takes 2 ranks and ends early; the second starts with the
  // 1 CPU left and grows to 2 at a checkpoint after the first ended.
  spec.param_space.set("speed", 0.2);
  spec.param_space.set("iterations", grid_search({3, 12}));
  spec.param_space.set("sleep_s", 0.2);
  spec.param_space.set("checkpoint_every", 1);
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 2);
  const auto db = spec.experiment_dir() / "experiment.db";
  CHECK(test::query(db,
                    "SELECT DISTINCT json_extract(metrics, '$.world_size') FROM results "
                    "WHERE trial_id = 'elastic_00000'") ==
        std::vector<std::vector<std::string>>{{"2"}});
  auto sizes = test::query(db,
                           "SELECT json_extract(metrics, '$.world_size') FROM results WHERE "
                           "trial_id = 'elastic_00001' ORDER BY training_iteration");
  REQUIRE(sizes.size() == 12);  // every iteration once, across the resize
  CHECK(sizes.front()[0] == "1");
  CHECK(sizes.back()[0] == "2");
  CHECK(test::query(db,
                    "SELECT count(*) FROM trial_events WHERE trial_id = 'elastic_00001' AND "
                    "to_status = 'PENDING' AND reason LIKE 'elastic: more than its 1 ranks fit "
                    "now%'")[0][0] == "1");
  CHECK(test::query(db, "SELECT sum(num_failures) FROM trials")[0][0] == "0");
}

namespace {

// Pauses every trial once, at iteration 3, then lets it run to the end.
class PauseOnce final : public schedulers::TrialScheduler {
 public:
  Decision on_trial_result(const schedulers::TrialView& trial, const Json& result) override {
    if (result["training_iteration"] == 3 && paused_.insert(trial.trial_id).second) {
      return Decision::kPause;
    }
    return Decision::kContinue;
  }
  int choose_trial_to_run(const std::vector<schedulers::TrialView>& candidates) override {
    return candidates.empty() ? -1 : 0;
  }
  std::string debug_string() const override { return "PauseOnce"; }

 private:
  std::set<std::string> paused_;
};

// Pauses the second trial at iteration 2 to exploit the first, whose
// checkpoints it deletes just before: the clone cannot succeed.
class BrokenExploit final : public schedulers::TrialScheduler {
 public:
  BrokenExploit(std::filesystem::path experiment_dir, std::string name)
      : dir_(std::move(experiment_dir)), name_(std::move(name)) {}
  Decision on_trial_result(const schedulers::TrialView& trial, const Json& result) override {
    if (trial.trial_id == name_ + "_00001" && result["training_iteration"] == 2) {
      std::filesystem::remove_all(dir_ / "trials" / (name_ + "_00000"));
      return Decision::kPause;
    }
    return Decision::kContinue;
  }
  std::optional<schedulers::Exploit> take_exploit(const std::string& trial_id) override {
    if (trial_id != name_ + "_00001") return std::nullopt;
    return schedulers::Exploit{name_ + "_00000", {{"speed", 0.2}, {"iterations", 8}}};
  }
  int choose_trial_to_run(const std::vector<schedulers::TrialView>& candidates) override {
    return candidates.empty() ? -1 : 0;
  }
  std::string debug_string() const override { return "BrokenExploit"; }

 private:
  std::filesystem::path dir_;
  std::string name_;
};

std::vector<std::vector<std::string>> events_of(const ExperimentSpec& spec,
                                                const std::string& trial_id) {
  return test::query(spec.experiment_dir() / "experiment.db",
                     "SELECT at, coalesce(from_status, '-'), to_status FROM trial_events "
                     "WHERE trial_id = '" +
                         trial_id + "' ORDER BY id");
}

}  // namespace

TEST_CASE("a paused and resumed trial keeps its first start, only status changes are events") {
  test::ScratchDir dir;
  ExperimentSpec spec = test::checkpointed_curve(dir, "pause_once");
  spec.param_space.set("speed", grid_search({0.1, 0.3}));
  spec.custom_scheduler = std::make_shared<PauseOnce>();
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 2);
  for (const auto& trial : open_store(spec).trials()) {
    INFO(trial.trial_id);
    const auto events = events_of(spec, trial.trial_id);
    std::vector<std::string> path;
    for (const auto& e : events) {
      CHECK(e[1] != e[2]);  // no PAUSED -> PAUSED, no X -> X
      path.push_back(e[2]);
    }
    CHECK(path ==
          std::vector<std::string>{"PENDING", "RUNNING", "PAUSED", "RUNNING", "TERMINATED"});
    REQUIRE(trial.started_at);
    CHECK(*trial.started_at == doctest::Approx(std::stod(events[1][0])));  // the first RUNNING
    REQUIRE(trial.finished_at);
    CHECK(*trial.finished_at == doctest::Approx(std::stod(events.back()[0])));
    CHECK(open_store(spec).results(trial.trial_id).size() == 8);
  }
}

TEST_CASE("a group that cannot start fails its trial under max_failures, not the experiment" *
          doctest::skip(test::kSimulatedRanks)) {
  test::ScratchDir dir;
  ExperimentSpec spec = curve_spec(dir, "no_binary");
  spec.max_failures = 1;
  ControllerOptions options;
  options.verbosity = 0;
  options.worker_argv = {(dir.path() / "no_such_worker").string()};
  ExperimentSummary summary = TrialController(spec, options).run();
  CHECK(summary.num_errors == 2);
  for (const auto& trial : open_store(spec).trials()) {
    CHECK(trial.status == TrialStatus::kError);
    CHECK(trial.num_failures == 2);  // the first try and its one retry
    CHECK(trial.error.find("could not start its workers") != std::string::npos);
    CHECK(trial.error.find("no_such_worker") != std::string::npos);
  }
  auto rows = test::query(spec.experiment_dir() / "experiment.db", "SELECT status FROM experiment");
  CHECK(rows.at(0).at(0) == "FINISHED");
}

TEST_CASE("a PBT clone that fails errors its trial, the others finish") {
  test::ScratchDir dir;
  ExperimentSpec spec = test::checkpointed_curve(dir, "bad_clone");
  spec.param_space.set("speed", grid_search({0.1, 0.3}));
  spec.max_concurrent_trials = 1;
  spec.custom_scheduler = std::make_shared<BrokenExploit>(spec.experiment_dir(), "bad_clone");
  ExperimentSummary summary = run(spec);
  CHECK(summary.num_terminated == 1);
  CHECK(summary.num_errors == 1);
  auto trials = open_store(spec).trials();
  std::sort(trials.begin(), trials.end(),
            [](const auto& a, const auto& b) { return a.trial_index < b.trial_index; });
  CHECK(trials[0].status == TrialStatus::kTerminated);
  CHECK(trials[1].status == TrialStatus::kError);
  CHECK(trials[1].error.find("exploiting bad_clone_00000") != std::string::npos);
  CHECK(trials[1].error.find("cannot clone checkpoint") != std::string::npos);
}
