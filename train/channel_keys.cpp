#include "train/channel_keys.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/errors.h"

namespace train {
namespace {

constexpr size_t kZ85KeyChars = 40;

}  // namespace

CurveKeypair make_curve_keypair() {
  if (!zmq_has("curve")) {
    throw tune::Error("this libzmq was built without CURVE: the control channel cannot be secured");
  }
  char public_key[kZ85KeyChars + 1];
  char secret_key[kZ85KeyChars + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    throw tune::Error(fmt::format("cannot make a CURVE keypair: {}", zmq_strerror(zmq_errno())));
  }
  return {public_key, secret_key};
}

void write_keypair(const std::filesystem::path& path, const CurveKeypair& keys) {
  // Created 0600 from the start (never readable by others, not even briefly).
  std::filesystem::remove(path);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const std::string text = keys.public_key + "\n" + keys.secret_key + "\n";
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    const std::string why = strerror(errno);
    if (fd >= 0) close(fd);
    throw tune::StorageError(fmt::format("cannot write key file {}: {}", path.string(), why));
  }
  close(fd);
}

CurveKeypair read_keypair(const std::filesystem::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw tune::Error(fmt::format("cannot read key file {}: {}", path.string(), strerror(errno)));
  }
  if ((st.st_mode & 077) != 0) {
    throw tune::Error(fmt::format("key file {} is readable by others (mode {:o}); it must be 0600",
                                  path.string(), st.st_mode & 0777));
  }
  std::ifstream in(path);
  CurveKeypair keys;
  if (!std::getline(in, keys.public_key) || !std::getline(in, keys.secret_key) ||
      keys.public_key.size() != kZ85KeyChars || keys.secret_key.size() != kZ85KeyChars) {
    throw tune::Error(fmt::format("key file {} does not hold a CURVE keypair", path.string()));
  }
  return keys;
}

void make_curve_server(zmq::socket_t& socket, const CurveKeypair& keys) {
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, keys.secret_key);
  socket.set(zmq::sockopt::curve_publickey, keys.public_key);
  // Every connection goes through the ZAP handler, which checks the client's key.
  socket.set(zmq::sockopt::zap_domain, "tunerun");
}

void make_curve_client(zmq::socket_t& socket, const std::string& server_public_key,
                       const CurveKeypair& keys) {
  socket.set(zmq::sockopt::curve_serverkey, server_public_key);
  socket.set(zmq::sockopt::curve_publickey, keys.public_key);
  socket.set(zmq::sockopt::curve_secretkey, keys.secret_key);
}

}  // namespace train
