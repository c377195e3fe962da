// Reads a scheduler's options table (JSON from a TOML [scheduler] table or
// the C++ API), checking each value's type and range. Every error is a
// tune::ConfigError whose key() names the option; finish() rejects keys the
// scheduler does not know, listing the ones it does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"
#include "schedulers/scheduler_options.h"

namespace tune::schedulers::detail {

class OptionReader {
 public:
  // Throws ConfigError when `options` is neither an object nor null.
  OptionReader(std::string scheduler, const Json& options);

  // Each reads `key` into `out` when present (leaving the default otherwise)
  // and throws ConfigError naming the key on a wrong type.
  void read(const std::string& key, double& out);
  void read(const std::string& key, int64_t& out);
  void read(const std::string& key, bool& out);
  void read(const std::string& key, std::string& out);
  void read(const std::string& key, std::optional<Mode>& out);  // "min" | "max"
  void read(const std::string& key, uint64_t& out);             // seeds: integers >= 0
  // The raw value, or null when absent; the key counts as known.
  const Json* raw(const std::string& key);

  // Throws ConfigError for `key` unless `ok`.
  void check(bool ok, const std::string& key, const std::string& message) const;
  // Throws ConfigError for the first option that no read()/raw() asked for.
  void finish() const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const Json* find(const std::string& key);

  std::string scheduler_;
  Json options_;
  std::vector<std::string> known_;
};

// ASHA's and HyperBand's options from their tables, read as make_scheduler
// reads them (factory.cpp), for readers of their saved state too. Throw
// ConfigError as OptionReader does.
AshaOptions read_asha_options(const Json& options);
HyperBandOptions read_hyperband_options(const Json& options);

}  // namespace tune::schedulers::detail
