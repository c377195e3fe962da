// CURVE credentials of the control channel (ZeroMQ's CurveZMQ: every
// connection between the controller and a rank is authenticated and
// encrypted). Each run of the controller makes a keypair of its own (its
// ROUTER is the CURVE server) and one for every rank it launches (each rank
// connects as a CURVE client with its own). All are written with mode 0600
// under the experiment directory's keys/; a rank gets the controller's
// public key and the path of its own key file through its environment
// (train/worker_env.h). The controller accepts a key only while the rank it
// was issued to lives, and only for that rank (tune/channel/rank_keys.h).
#pragma once

#include <filesystem>
#include <string>
#include <zmq.hpp>

namespace train {

// Z85 text, 40 characters each.
struct CurveKeypair {
  std::string public_key;
  std::string secret_key;
};

// A fresh keypair. Throws tune::Error when this libzmq has no CURVE.
CurveKeypair make_curve_keypair();

// Writes `keys` to `path` (two lines: public, secret) with mode 0600,
// replacing any file there. Throws tune::StorageError naming the path.
void write_keypair(const std::filesystem::path& path, const CurveKeypair& keys);

// Reads a file write_keypair() wrote. Throws tune::Error naming the path
// when it is missing, malformed, or readable by others than its owner.
CurveKeypair read_keypair(const std::filesystem::path& path);

// Makes `socket` (before bind) a CURVE server with `keys`.
void make_curve_server(zmq::socket_t& socket, const CurveKeypair& keys);

// Makes `socket` (before connect) a CURVE client of the server whose public
// key is `server_public_key`, proving itself with `keys`.
void make_curve_client(zmq::socket_t& socket, const std::string& server_public_key,
                       const CurveKeypair& keys);

}  // namespace train
