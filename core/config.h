// tune::Config: one trial's hyperparameters, as the searcher resolved them.
//
// A thin read-only view over a JSON object (nlohmann::json, keys sorted, so
// two equal configs print and hash the same). Nested tables are reached with
// dotted keys: config.get<double>("optimizer.lr"). A missing key or a value
// of the wrong type throws tune::ConfigError naming the key.
//
// Metrics travel as the same JSON type: tune::Json{{"loss", 0.1}}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/errors.h"

namespace tune::core {

using Json = nlohmann::json;

class Config {
 public:
  Config() : json_(Json::object()) {}
  explicit Config(Json json);

  // The value at `key` (dotted for nested tables) converted to T. Integers
  // convert to floating point; a float does not silently become an integer.
  template <class T>
  T get(std::string_view key) const {
    const Json& value = at(key);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!value.is_number_integer()) throw type_error(key, "an integer", value);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!value.is_number()) throw type_error(key, "a number", value);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) throw type_error(key, "a boolean", value);
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
      if (!value.is_string()) throw type_error(key, "a string", value);
    }
    try {
      return value.get<T>();
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError::at_key(std::string(key), e.what());
    }
  }

  // As get<T>(key), or `fallback` when the key is absent.
  template <class T>
  T get(std::string_view key, T fallback) const {
    return contains(key) ? get<T>(key) : fallback;
  }

  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Json& json() const { return json_; }
  std::string dump() const { return json_.dump(); }

  friend bool operator==(const Config& a, const Config& b) { return a.json_ == b.json_; }

 private:
  const Json* find(std::string_view key) const;
  const Json& at(std::string_view key) const;
  static ConfigError type_error(std::string_view key, const char* expected, const Json& got);

  Json json_;
};

// Renders a config for a person: {"lr": 0.01, "model": {"width": 64}}.
inline std::string format_as(const Config& config) { return config.dump(); }

}  // namespace tune::core

// The user-facing API spells them tune::Json and tune::Config.
namespace tune {
using core::Config;
using core::Json;
}  // namespace tune
