// PeerBook: who speaks for which rank on the control channel
// (tune/channel/router.h): the key issued to each launched rank, the key
// each connection (routing id) said HELLO with, and the trial and rank each
// routing id is bound to after its HELLO. It holds no socket: the channel
// asks it about every message it receives. Every operation costs the same
// however many peers it holds (a controller holds thousands): none scans them.
//
// Owned by the controller's event loop; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/protocol.h"

namespace tune {

struct Peer {
  std::string trial_id;
  int rank = 0;
};

class PeerBook {
 public:
  // A connection holding `public_key` may say HELLO only as `rank` of
  // `attempt` of `trial_id`, and every later message on it must hold it too.
  void issue(const std::string& public_key, const std::string& trial_id, int attempt, int rank);
  // Forgets `public_key` and which connections said HELLO with it.
  void revoke(const std::string& public_key);

  // Why `message`, received on `routing_id`'s connection whose CURVE key is
  // `key`, does not come from the rank it speaks for; nullopt when it does.
  // A HELLO that passes ties the routing id to its key.
  std::optional<std::string> check_key(const std::string& routing_id, const std::string& key,
                                       const protocol::Message& message);
  // Whether `beat`, from a connection holding `key`, may count for its rank:
  // only the key of the connection its rank is bound to may.
  bool beats_for_its_rank(const protocol::Heartbeat& beat, const std::string& key) const;

  // The peer `routing_id` is bound to; null before its HELLO.
  const Peer* peer(const std::string& routing_id) const;
  void bind(const std::string& routing_id, Peer peer);
  void unbind(const std::string& routing_id);

 private:
  struct Issued {
    std::string trial_id;
    int attempt = 0;
    int rank = 0;
  };
  // Drops the rank `peer` from bound_ if `routing_id` is what it is bound to.
  void forget_rank(const std::string& routing_id, const Peer& peer);

  std::unordered_map<std::string, Peer> peers_;
  std::unordered_map<std::string, Issued> issued_;     // public key -> its rank
  std::unordered_map<std::string, std::string> keys_;  // routing id -> key its HELLO held
  std::unordered_map<std::string, std::vector<std::string>> holders_;  // key -> its routing ids
  std::unordered_map<std::string, std::string> bound_;  // "trial\nrank" -> its routing id
};

}  // namespace tune
