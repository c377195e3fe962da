#include "schedulers/internal/options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tune::schedulers::detail {

OptionReader::OptionReader(std::string scheduler, const Json& options)
    : scheduler_(std::move(scheduler)), options_(options.is_null() ? Json::object() : options) {
  if (!options_.is_object()) {
    throw ConfigError::at_key(
        "type", fmt::format("the {} scheduler's options must be a table", scheduler_));
  }
}

const Json* OptionReader::find(const std::string& key) {
  known_.push_back(key);
  auto it = options_.find(key);
  return it == options_.end() ? nullptr : &*it;
}

void OptionReader::fail(const std::string& key, const std::string& message) const {
  throw ConfigError::at_key(key, fmt::format("{} scheduler: {}", scheduler_, message));
}

void OptionReader::check(bool ok, const std::string& key, const std::string& message) const {
  if (!ok) fail(key, message);
}

void OptionReader::read(const std::string& key, double& out) {
  if (const Json* v = find(key)) {
    if (!v->is_number()) fail(key, fmt::format("{} must be a number, got {}", key, v->dump()));
    out = v->get<double>();
  }
}

void OptionReader::read(const std::string& key, int64_t& out) {
  if (const Json* v = find(key)) {
    if (!v->is_number_integer()) {
      fail(key, fmt::format("{} must be an integer, got {}", key, v->dump()));
    }
    out = v->get<int64_t>();
  }
}

void OptionReader::read(const std::string& key, uint64_t& out) {
  if (const Json* v = find(key)) {
    if (!v->is_number_integer() ||
        (v->is_number_integer() && !v->is_number_unsigned() && v->get<int64_t>() < 0)) {
      fail(key, fmt::format("{} must be an integer >= 0, got {}", key, v->dump()));
    }
    out = v->get<uint64_t>();
  }
}

void OptionReader::read(const std::string& key, bool& out) {
  if (const Json* v = find(key)) {
    if (!v->is_boolean())
      fail(key, fmt::format("{} must be true or false, got {}", key, v->dump()));
    out = v->get<bool>();
  }
}

void OptionReader::read(const std::string& key, std::string& out) {
  if (const Json* v = find(key)) {
    if (!v->is_string()) fail(key, fmt::format("{} must be a string, got {}", key, v->dump()));
    out = v->get<std::string>();
  }
}

void OptionReader::read(const std::string& key, std::optional<Mode>& out) {
  if (const Json* v = find(key)) {
    std::optional<Mode> mode;
    if (v->is_string()) mode = mode_from_string(v->get<std::string>());
    if (!mode) fail(key, fmt::format("{} must be \"min\" or \"max\", got {}", key, v->dump()));
    out = mode;
  }
}

const Json* OptionReader::raw(const std::string& key) { return find(key); }

void OptionReader::finish() const {
  for (const auto& [key, value] : options_.items()) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
      fail(key, fmt::format("unknown option '{}'; known: type, {}", key, fmt::join(known_, ", ")));
    }
  }
}

}  // namespace tune::schedulers::detail
