#include "core/config.h"

#include <fmt/format.h>

namespace tune::core {

Config::Config(Json json) : json_(std::move(json)) {
  if (!json_.is_object()) throw ConfigError("a config must be a table, got " + json_.dump());
}

const Json* Config::find(std::string_view key) const {
  const Json* node = &json_;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part(key.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

const Json& Config::at(std::string_view key) const {
  if (const Json* value = find(key)) return *value;
  throw ConfigError::at_key(std::string(key),
                            fmt::format("not in the trial's config {}", json_.dump()));
}

ConfigError Config::type_error(std::string_view key, const char* expected, const Json& got) {
  return ConfigError::at_key(std::string(key),
                             fmt::format("expected {}, got {}", expected, got.dump()));
}

}  // namespace tune::core
