// ControlChannel: the controller's end of the control protocol
// (core/protocol.h): one ZeroMQ ROUTER socket, a CURVE server that admits
// only the experiment's workers (tune/zap_handler.h), the peers that said HELLO
// (which trial and rank each routing id speaks for), the messages it had to
// reject, and the outbox of replies, sent only after the store committed
// what they acknowledge.
//
// Owned by the controller's event loop; not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "core/protocol.h"
#include "train/curve.h"
#include "tune/zap_handler.h"

namespace tune {

// The credentials of one controller run (train/curve.h).
struct ChannelKeys {
  train::CurveKeypair controller;
  train::CurveKeypair workers;
  std::filesystem::path workers_file;  // the workers' keypair, mode 0600: ranks read it
};

// Makes fresh keys for this run and writes them, mode 0600, under
// `experiment_dir`/keys/ (controller.key, worker.key): ranks of an earlier
// run, or of a killed controller, can no longer connect. Throws
// StorageError naming the file it could not write.
ChannelKeys make_channel_keys(const std::filesystem::path& experiment_dir);

struct Peer {
  std::string trial_id;
  int rank = 0;
};

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
  // CURVE server with `keys.controller` admitting clients with `keys.workers`.
  // `context` gets the ZAP handler: one ControlChannel per context.
  ControlChannel(zmq::context_t& context, const std::string& endpoint, const ChannelKeys& keys);

  const std::string& endpoint() const { return endpoint_; }
  void* handle() { return socket_.handle(); }

  // Receives what is waiting, at most `limit` messages.
  void drain(int limit, const Handler& on_message, const RejectHandler& on_reject);

  void bind_peer(const std::string& routing_id, Peer peer) { peers_[routing_id] = std::move(peer); }
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
  std::vector<std::string> take_refusals() { return zap_->take_refusals(); }

  // A routing id as text, for logs.
  static std::string peer_name(const std::string& routing_id);

 private:
  zmq::socket_t socket_;
  std::unique_ptr<ZapHandler> zap_;  // after socket_: stops watching it first
  std::string endpoint_;
  std::unordered_map<std::string, Peer> peers_;
  std::vector<std::pair<std::string, std::string>> outbox_;  // routing id, encoded message
};

}  // namespace tune
