#include "search/factory.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "search/basic_variant.h"

namespace tune::search {
namespace {

constexpr const char* kKnownAlgorithms = "random, basic, grid";

BasicVariantOptions basic_variant_options(const std::string& algorithm, const Json& options,
                                          const SearcherContext& context) {
  BasicVariantOptions out;
  out.num_samples = context.num_samples;
  out.seed = context.seed;
  for (const auto& [key, value] : options.items()) {
    if (key == "seed") {
      if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0)) {
        throw ConfigError("expected a non-negative integer, got " + value.dump(), {}, 0, key);
      }
      out.seed = value.get<uint64_t>();
    } else if (key == "points_to_evaluate") {
      if (!value.is_array()) {
        throw ConfigError("expected an array of tables, got " + value.dump(), {}, 0, key);
      }
      for (const Json& point : value) {
        if (!point.is_object()) {
          throw ConfigError("expected an array of tables, got element " + point.dump(), {}, 0, key);
        }
        out.points_to_evaluate.push_back(point);
      }
    } else {
      throw ConfigError(fmt::format("unknown option for searcher '{}'; known: seed, "
                                    "points_to_evaluate",
                                    algorithm),
                        {}, 0, key);
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<Searcher> make_searcher(const std::string& algorithm, const Json& options,
                                        const SearcherContext& context) {
  if (!options.is_null() && !options.is_object()) {
    throw ConfigError(
        fmt::format("options for searcher '{}' must be a table, got {}", algorithm, options.dump()),
        {}, 0, "search");
  }
  if (algorithm == "random" || algorithm == "basic" || algorithm == "grid") {
    return std::make_unique<BasicVariantGenerator>(
        basic_variant_options(algorithm, options, context));
  }
  throw ConfigError(
      fmt::format("unknown search algorithm '{}'; known: {}", algorithm, kKnownAlgorithms), {}, 0,
      "algorithm");
}

}  // namespace tune::search
