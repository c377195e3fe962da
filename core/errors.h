// The one exception hierarchy of tunerun. Every error says what failed and
// where: a sweep-file error carries its file, line and key; a storage error
// its database path; a protocol error the peer and the reason.
//
// Errors are thrown where they are found and caught only at process edges:
// the CLI turns them into a message and an exit code, the worker runtime into
// a trial error record, the controller into a logged rejection of a message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace tune::core {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Invalid user input: a sweep file, a param space, an option value.
// what() reads "FILE:LINE: key 'KEY': MESSAGE" when the location is known.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message, std::string file = {}, int64_t line = 0,
                       std::string key = {});

  // An option's value is wrong and no sweep file is involved (a C++ or
  // Python option, a table's entry): the error names the key alone.
  static ConfigError at_key(std::string key, const std::string& message) {
    return ConfigError(message, {}, 0, std::move(key));
  }

  const std::string& file() const { return file_; }
  int64_t line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  std::string file_;
  int64_t line_ = 0;
  std::string key_;
};

// The experiment database or directory could not be read or written: a
// cause in the user's environment (a path, a permission, a full disk, a
// corrupt or foreign file), which the CLI reports with exit code 2.
class StorageError : public Error {
 public:
  enum class Cause {
    kOther,
    kDiskFull,  // the disk holding the experiment is full: free space, then resume
  };
  explicit StorageError(const std::string& message, Cause cause = Cause::kOther)
      : Error(message), cause_(cause) {}
  Cause cause() const { return cause_; }

 private:
  Cause cause_ = Cause::kOther;
};

// A malformed, unknown or out-of-order control message.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

// A trial's worker group failed (a rank raised, exited or stopped answering).
class TrialError : public Error {
 public:
  using Error::Error;
};

}  // namespace tune::core

namespace tune {
using core::ConfigError;
using core::Error;
using core::ProtocolError;
using core::StorageError;
using core::TrialError;
}  // namespace tune
