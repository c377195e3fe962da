// ControlChannel: the controller's end of the control protocol
// (core/protocol.h): one ZeroMQ ROUTER socket, a CURVE server that admits
// only keys issued to live ranks (tune/channel/zap_handler.h, tune/channel/rank_keys.h), the
// peers that said HELLO (which trial and rank each routing id speaks for:
// only the one its key was issued to: tune/channel/peer_book.h), the messages it
// had to reject, and the outbox of replies, sent only after the store committed
// what they acknowledge. It times each DECISION from the receipt of the
// REPORT whose handling queued it (for a group, its last rank's: the one
// that completed the iteration) to its send (decision_latency()).
//
// Owned by the controller's event loop; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "core/protocol.h"
#include "train/channel_keys.h"
#include "tune/channel/latency_histogram.h"
#include "tune/channel/peer_book.h"
#include "tune/channel/zap_handler.h"

namespace tune {

// The credentials of one controller run (train/channel_keys.h).
struct ChannelKeys {
  train::CurveKeypair controller;
  std::filesystem::path
      dir;  // mode 0700: controller.key, and each rank's (tune/channel/rank_keys.h)
};

// Makes a fresh controller keypair for this run and writes it, mode 0600, to
// `experiment_dir`/keys/controller.key, removing what an earlier run left
// there: ranks of an earlier run, or of a killed controller, can no longer
// connect. Throws StorageError naming the file it could not write.
ChannelKeys make_channel_keys(const std::filesystem::path& experiment_dir);

class ControlChannel {
 public:
  // Called for each message received: the sender's routing id, the bound
  // peer (null before its HELLO) and the decoded message.
  using Handler =
      std::function<void(const std::string& routing_id, const Peer* peer, protocol::Message&)>;
  // Called for each message that could not be decoded, from a bound peer or not.
  using RejectHandler =
      std::function<void(const std::string& routing_id, const Peer* peer, const std::string&)>;

  // Binds a ROUTER socket to `endpoint` (e.g. "tcp://127.0.0.1:*"), a
  // CURVE server with `keys.controller` admitting no client until admit().
  // `context` gets the ZAP handler: one ControlChannel per context.
  ControlChannel(zmq::context_t& context, const std::string& endpoint, const ChannelKeys& keys);

  const std::string& endpoint() const { return endpoint_; }
  void* handle() { return socket_.handle(); }

  // Receives what is waiting, at most `limit` messages; returns how many came.
  int drain(int limit, const Handler& on_message, const RejectHandler& on_reject);

  // Lockstep (tune/launch/lockstep.h): from now on, every message sent is
  // recorded, its routing id in take_sent().
  void record_sends() { sent_.emplace(); }
  std::vector<std::string> take_sent() {
    return sent_ ? std::exchange(*sent_, {}) : std::vector<std::string>{};
  }
  // Receives and handles the next message of `routing_id`, waiting for it
  // (what others sent meanwhile is held, in order, for their turn). Throws
  // Error when none comes within a minute.
  void take_from(const std::string& routing_id, const Handler& on_message,
                 const RejectHandler& on_reject);

  // Lets clients holding `public_key` connect; a connection holding it may
  // say HELLO only as `rank` of `attempt` of `trial_id` (a spare group's:
  // train::kSpareTrialId and its serial), and every later message on it
  // must hold it too; a heartbeat for a bound rank from another key is dropped.
  void admit(const std::string& public_key, const std::string& trial_id, int attempt, int rank);
  // Refuses new connections holding `public_key` (its rank's group is gone).
  void revoke(const std::string& public_key);

  void bind_peer(const std::string& routing_id, Peer peer);
  // Forgets the peer and drops what is queued for it: a rank whose trial
  // ended needs no answer (its last report's decision, say, when DONE came
  // right behind the report).
  void unbind_peer(const std::string& routing_id);

  // Queues a reply, sent by flush(): after the store's commit, for
  // decisions (a rank that hears one has its result on disk).
  void queue(const std::string& routing_id, const protocol::Message& message);
  // Sends now what needs no commit first (a START, a resume): the rank
  // starts while the controller commits. A rank gone is not an error here:
  // its exit is handled as an exit.
  void send_now(const std::string& routing_id, const protocol::Message& message);
  // Sends every queued reply; returns the routing ids that could not be
  // reached (their ranks are gone: their exits are handled as exits).
  std::vector<std::string> flush();

  // The connections refused since the last call, with why (for the log).
  std::vector<Refusal> take_refusals() { return zap_->take_refusals(); }

  // Each DECISION queued while a REPORT was handled: from the REPORT's
  // receipt to the DECISION's send. Real time, whatever clock the controller runs on.
  const LatencyHistogram& decision_latency() const { return decision_latency_; }

  // A routing id as text, for logs.
  static std::string peer_name(const std::string& routing_id);

 private:
  // One message as it came: the sender's routing id and its frames.
  struct Received {
    std::string peer;
    std::vector<zmq::message_t> frames;
  };
  // The next message; nullopt when none came within `wait`.
  std::optional<Received> receive(std::chrono::milliseconds wait);
  void handle(Received& received, const Handler& on_message, const RejectHandler& on_reject);
  void sent(const std::string& routing_id) {
    if (sent_) sent_->push_back(routing_id);
  }

  zmq::socket_t socket_;
  std::unique_ptr<ZapHandler> zap_;  // after socket_: stops watching it first
  std::string endpoint_;
  PeerBook book_;
  struct Queued {
    std::string routing_id;
    std::string bytes;                                                     // the encoded message
    std::optional<std::chrono::steady_clock::time_point> report_received;  // a DECISION's
  };
  std::vector<Queued> outbox_;
  // While a REPORT is handled: when it was received.
  std::optional<std::chrono::steady_clock::time_point> report_received_;
  LatencyHistogram decision_latency_;
  // Routing ids unbound this turn, with the outbox's size then: what was
  // queued for them before is not sent (no scan of the outbox per unbind).
  std::unordered_map<std::string, size_t> dropped_before_;
  std::optional<std::vector<std::string>> sent_;                // recorded sends (record_sends)
  std::unordered_map<std::string, std::deque<Received>> held_;  // take_from: not their turn yet
};

}  // namespace tune
