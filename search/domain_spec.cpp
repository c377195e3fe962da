#include "search/domain_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/errors.h"

namespace tune {
namespace {

// `args` as `arity` numbers (integers when `integers`), or a ConfigError
// naming the expected form.
std::vector<double> numbers(const std::string& kind, const Json& args, size_t arity,
                            const char* form, bool integers) {
  if (args.size() != arity) {
    throw ConfigError(fmt::format("{} takes {}, got {} values", kind, form, args.size()));
  }
  std::vector<double> out;
  for (const Json& arg : args) {
    if (integers ? !arg.is_number_integer() : !arg.is_number()) {
      throw ConfigError(fmt::format("{} takes {} ({}), got {}", kind, form,
                                    integers ? "integers" : "numbers", args.dump()));
    }
    out.push_back(arg.get<double>());
  }
  return out;
}

std::vector<int64_t> integers(const std::string& kind, const Json& args, size_t arity,
                              const char* form) {
  numbers(kind, args, arity, form, true);
  std::vector<int64_t> out;
  for (const Json& arg : args) out.push_back(arg.get<int64_t>());
  return out;
}

}  // namespace

const std::vector<std::string>& domain_spec_kinds() {
  static const std::vector<std::string> kinds = {
      "uniform", "quniform", "loguniform", "qloguniform", "randn",  "qrandn",
      "randint", "qrandint", "lograndint", "qlograndint", "choice", "grid_search"};
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
  if (kind == "randint" || kind == "lograndint") {
    auto b = integers(kind, args, 2, "two integers [lower, upper) (upper exclusive)");
    return kind == "randint" ? randint(b[0], b[1]) : lograndint(b[0], b[1]);
  }
  if (kind == "qrandint" || kind == "qlograndint") {
    auto b = integers(kind, args, 3, "[lower, upper, q] (upper inclusive)");
    return kind == "qrandint" ? qrandint(b[0], b[1], b[2]) : qlograndint(b[0], b[1], b[2]);
  }
  if (kind == "randn") {
    if (args.empty()) return randn();
    auto a = numbers(kind, args, 2, "[mean, sd]", false);
    return randn(a[0], a[1]);
  }
  if (kind == "qrandn") {
    auto a = numbers(kind, args, 3, "[mean, sd, q]", false);
    return qrandn(a[0], a[1], a[2]);
  }
  if (kind == "quniform" || kind == "qloguniform") {
    auto a = numbers(kind, args, 3, "[lower, upper, q]", false);
    return kind == "quniform" ? quniform(a[0], a[1], a[2]) : qloguniform(a[0], a[1], a[2]);
  }
  auto a = numbers(kind, args, 2, "[lower, upper]", false);
  return kind == "uniform" ? uniform(a[0], a[1]) : loguniform(a[0], a[1]);
}

}  // namespace tune
