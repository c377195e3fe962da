#include "core/protocol.h"

#include <doctest/doctest.h>

#include <random>

namespace proto = tune::protocol;
using tune::Json;
using tune::ProtocolError;

namespace {

template <class T>
T round_trip(const T& message) {
  proto::Message decoded = proto::decode(proto::encode(message));
  REQUIRE(std::holds_alternative<T>(decoded));
  return std::get<T>(decoded);
}

}  // namespace

TEST_CASE("every message type survives encode and decode") {
  auto hello = round_trip(proto::Hello{"exp_00003", 1, 2, 4242, "n3", "17.4"});
  CHECK(hello.trial_id == "exp_00003");
  CHECK(hello.rank == 1);
  CHECK(hello.attempt == 2);
  CHECK(hello.pid == 4242);
  CHECK(hello.host == "n3");
  CHECK(hello.step == "17.4");

  Json config = {{"lr", 1e-3}, {"layers", -3},      {"act", "relu"},
                 {"on", true}, {"sizes", {32, 64}}, {"model", {{"width", 64}, {"none", nullptr}}}};
  auto start = round_trip(proto::Start{"quadratic",
                                       "/lib/x.so",
                                       config,
                                       "/tmp/t",
                                       "exp",
                                       4,
                                       "/ckpt",
                                       7,
                                       {"python3", "train.py", "--lr", "{lr}"},
                                       "exp_00003",
                                       2,
                                       29500,
                                       "/tmp/t/rank_1.log",
                                       false,
                                       26,
                                       35});
  CHECK(start.trainable == "quadratic");
  CHECK(start.library == "/lib/x.so");
  CHECK(start.config == config);
  CHECK(start.world_size == 4);
  CHECK(start.checkpoint == "/ckpt");
  CHECK(start.start_iteration == 7);
  CHECK(start.trial_id == "exp_00003");
  CHECK(start.attempt == 2);
  CHECK(start.master_port == 29500);
  CHECK(start.log_path == "/tmp/t/rank_1.log");
  CHECK_FALSE(start.pipelined);
  CHECK(start.continue_through == 26);
  CHECK(start.checkpoint_through == 35);
  CHECK(start.command == std::vector<std::string>{"python3", "train.py", "--lr", "{lr}"});

  Json metrics = {{"loss", 0.25}, {"step", 7}, {"big", 1ull << 63}};
  auto report =
      round_trip(proto::Report{12, metrics, 0.5, 6.0, true, {{"loss", tune::ReduceOp::kMean}}});
  CHECK(report.iteration == 12);
  CHECK(report.metrics == metrics);
  CHECK(report.time_total_s == 6.0);
  CHECK(report.checkpoint);
  CHECK(report.reduce == std::map<std::string, tune::ReduceOp>{{"loss", tune::ReduceOp::kMean}});

  CHECK(round_trip(proto::DecisionMsg{3, tune::Decision::kStop}).decision == tune::Decision::kStop);
  CHECK(round_trip(proto::Done{9}).iterations == 9);
  CHECK(round_trip(proto::DecisionMsg{3, tune::Decision::kPause, true}).suspend);
  CHECK_FALSE(round_trip(proto::DecisionMsg{3, tune::Decision::kPause}).suspend);
  CHECK(round_trip(proto::DecisionMsg{3, tune::Decision::kContinue, false, 80}).continue_through ==
        80);
  CHECK(round_trip(proto::DecisionMsg{3, tune::Decision::kStop, false, 0, "exp_00007"}).trial_id ==
        "exp_00007");
  CHECK(round_trip(proto::DecisionMsg{3, tune::Decision::kContinue, false, 5, "exp_00007", 8})
            .checkpoint_through == 8);
  CHECK(round_trip(proto::Done{9, true}).suspended);
  CHECK(round_trip(proto::ErrorMsg{"boom", "rank 0"}).message == "boom");
  CHECK(round_trip(proto::Heartbeat{"t", 3, 1}).rank == 3);
}

TEST_CASE("garbage bytes are rejected with a reason, never a crash") {
  CHECK_THROWS_WITH_AS(proto::decode(""), doctest::Contains("not a msgpack message"),
                       ProtocolError);
  CHECK_THROWS_AS(proto::decode("hello world"), ProtocolError);
  // A forged array32 header claiming 4 billion elements must not allocate them.
  CHECK_THROWS_AS(proto::decode(std::string("\xdd\xff\xff\xff\xff", 5)), ProtocolError);
  CHECK_THROWS_AS(proto::decode(std::string("\xdf\xff\xff\xff\xff", 5)), ProtocolError);

  std::mt19937_64 rng(1);
  const std::string valid = proto::encode(proto::Report{1, {{"loss", 1.0}}, 0, 0});
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = valid;
    bytes[rng() % bytes.size()] = static_cast<char>(rng());
    bytes.resize(rng() % (bytes.size() + 1));
    try {
      proto::decode(bytes);  // a mutation may still be a valid message
    } catch (const ProtocolError&) {
    }
  }
}

TEST_CASE("a report naming an unknown reduce operation is rejected, not summed") {
  std::string bytes = proto::encode(
      proto::Report{1, {{"loss", 1.0}}, 0, 0, false, {{"loss", tune::ReduceOp::kMean}}});
  bytes.replace(bytes.find("mean"), 4, "mode");  // same length: still valid msgpack
  CHECK_THROWS_WITH_AS(proto::decode(bytes),
                       doctest::Contains("unknown reduce operation \"mode\" for metric 'loss'"),
                       ProtocolError);
}

TEST_CASE("well-formed msgpack that is not our message is rejected") {
  // The msgpack map {"v": 1, "t": "launch"}: an unknown type.
  const std::string unknown_type = "\x82\xa1v\x01\xa1t\xa6launch";
  CHECK_THROWS_WITH_AS(proto::decode(unknown_type), doctest::Contains("unknown message type"),
                       ProtocolError);
  // {"v": 2, "t": "done"}: another protocol version.
  CHECK_THROWS_WITH_AS(proto::decode("\x82\xa1v\x02\xa1t\xa4\x64one"),
                       doctest::Contains("protocol version 2"), ProtocolError);
  // {"v": 1, "t": "done"}: a field missing.
  CHECK_THROWS_WITH_AS(proto::decode("\x82\xa1v\x01\xa1t\xa4\x64one"),
                       doctest::Contains("missing field 'iterations'"), ProtocolError);
  // A msgpack array, not a map.
  CHECK_THROWS_AS(proto::decode("\x92\x01\x02"), ProtocolError);
  // Trailing bytes after a valid message.
  CHECK_THROWS_WITH_AS(proto::decode(proto::encode(proto::Done{1}) + "x"),
                       doctest::Contains("trailing"), ProtocolError);
  // A report whose metrics are not a map.
  std::string bad_metrics = proto::encode(proto::Report{1, Json::array({1, 2}), 0, 0});
  CHECK_THROWS_WITH_AS(proto::decode(bad_metrics), doctest::Contains("'metrics' is not a map"),
                       ProtocolError);
}

TEST_CASE("oversized frames are refused before parsing") {
  std::string huge(proto::kMaxMessageBytes + 1, '\0');
  CHECK_THROWS_WITH_AS(proto::decode(huge), doctest::Contains("exceeds"), ProtocolError);
}
