// PeerBook (tune/channel/peer_book.h): the control channel's keys and peers.
#include "tune/channel/peer_book.h"

#include <fmt/format.h>

namespace tune {
namespace {

std::string rank_name(const std::string& trial_id, int rank) {
  return fmt::format("{}\n{}", trial_id, rank);
}

}  // namespace

void PeerBook::issue(const std::string& public_key, const std::string& trial_id, int attempt,
                     int rank) {
  issued_[public_key] = {trial_id, attempt, rank};
}

void PeerBook::revoke(const std::string& public_key) {
  issued_.erase(public_key);
  auto holders = holders_.extract(public_key);
  if (holders.empty()) return;
  for (const std::string& routing_id : holders.mapped()) {
    auto held = keys_.find(routing_id);
    if (held != keys_.end() && held->second == public_key) keys_.erase(held);
  }
}

std::optional<std::string> PeerBook::check_key(const std::string& routing_id,
                                               const std::string& key,
                                               const protocol::Message& message) {
  if (const auto* hello = std::get_if<protocol::Hello>(&message)) {
    auto issued = issued_.find(key);
    if (issued == issued_.end() || issued->second.trial_id != hello->trial_id ||
        issued->second.attempt != hello->attempt || issued->second.rank != hello->rank) {
      return fmt::format(
          "HELLO as rank {} of trial {} attempt {} from a connection whose key was not issued "
          "to that rank",
          hello->rank, hello->trial_id, hello->attempt);
    }
    std::string& held = keys_[routing_id];
    if (held != key) {
      held = key;
      holders_[key].push_back(routing_id);
    }
    return std::nullopt;
  }
  auto held = keys_.find(routing_id);
  if (held == keys_.end() || held->second == key) return std::nullopt;
  return fmt::format("{} on the routing id of a rank, from a connection without its key",
                     protocol::type_name(message));
}

// A rank beats on a connection of its own, holding the key of its HELLO.
bool PeerBook::beats_for_its_rank(const protocol::Heartbeat& beat, const std::string& key) const {
  auto bound = bound_.find(rank_name(beat.trial_id, beat.rank));
  if (bound == bound_.end()) return true;  // not bound (yet): nothing to check against
  auto held = keys_.find(bound->second);
  return held == keys_.end() || held->second == key;
}

const Peer* PeerBook::peer(const std::string& routing_id) const {
  auto it = peers_.find(routing_id);
  return it == peers_.end() ? nullptr : &it->second;
}

void PeerBook::forget_rank(const std::string& routing_id, const Peer& peer) {
  auto bound = bound_.find(rank_name(peer.trial_id, peer.rank));
  if (bound != bound_.end() && bound->second == routing_id) bound_.erase(bound);
}

void PeerBook::bind(const std::string& routing_id, Peer peer) {
  auto& slot = peers_[routing_id];
  forget_rank(routing_id, slot);
  bound_[rank_name(peer.trial_id, peer.rank)] = routing_id;
  slot = std::move(peer);
}

void PeerBook::unbind(const std::string& routing_id) {
  auto bound = peers_.find(routing_id);
  if (bound != peers_.end()) forget_rank(routing_id, bound->second);
  peers_.erase(routing_id);
}

}  // namespace tune
