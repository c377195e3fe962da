#include "search/domain_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tune {
namespace {

std::pair<double, double> bounds(const std::string& kind, const Json& args) {
  if (args.size() != 2) {
    throw ConfigError(fmt::format("{} takes [lower, upper], got {} values", kind, args.size()));
  }
  if (!args[0].is_number() || !args[1].is_number()) {
    throw ConfigError(fmt::format("{} bounds must be numbers, got {}", kind, args.dump()));
  }
  return {args[0].get<double>(), args[1].get<double>()};
}

}  // namespace

const std::vector<std::string>& domain_spec_kinds() {
  static const std::vector<std::string> kinds = {"uniform", "loguniform", "randint", "choice",
                                                 "grid_search"};
  return kinds;
}

Domain domain_from_spec(const Json& spec) {
  if (!spec.is_object() || spec.size() != 1) {
    throw ConfigError(fmt::format("a domain is a table with one key, one of: {}",
                                  fmt::join(domain_spec_kinds(), ", ")));
  }
  const std::string& kind = spec.begin().key();
  const Json& args = spec.begin().value();
  const auto& kinds = domain_spec_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    throw ConfigError(fmt::format("unknown domain '{}'; known: {}", kind, fmt::join(kinds, ", ")));
  }
  if (!args.is_array())
    throw ConfigError(fmt::format("{} takes an array, e.g. {} = [...]", kind, kind));
  if (kind == "choice") return choice(args.get<std::vector<Json>>());
  if (kind == "grid_search") return grid_search(args.get<std::vector<Json>>());
  if (kind == "randint") {
    if (args.size() != 2 || !args[0].is_number_integer() || !args[1].is_number_integer()) {
      throw ConfigError(
          fmt::format("randint takes two integers [lower, upper), got {}", args.dump()));
    }
    return randint(args[0].get<int64_t>(), args[1].get<int64_t>());
  }
  auto [lower, upper] = bounds(kind, args);
  return kind == "uniform" ? uniform(lower, upper) : loguniform(lower, upper);
}

}  // namespace tune
