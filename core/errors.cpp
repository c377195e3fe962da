#include "core/errors.h"

#include <fmt/format.h>

namespace tune::core {
namespace {

std::string format_config_error(const std::string& message, const std::string& file, int64_t line,
                                const std::string& key) {
  std::string where;
  if (!file.empty()) where = line > 0 ? fmt::format("{}:{}: ", file, line) : file + ": ";
  if (!key.empty()) where += fmt::format("key '{}': ", key);
  return where + message;
}

}  // namespace

ConfigError::ConfigError(const std::string& message, std::string file, int64_t line,
                         std::string key)
    : Error(format_config_error(message, file, line, key)),
      message_(message),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)) {}

}  // namespace tune::core
