// Creates a searcher from its name and an options table (as in a sweep
// file's [search] table), so the CLI and the C++ API share one path.
#pragma once

#include <memory>
#include <string>

#include "search/searcher.h"

namespace tune::search {

struct SearcherContext {
  int64_t num_samples = 1;  // the experiment's num_samples
  uint64_t seed = 0;        // the experiment's seed, unless the options set one
};

// `algorithm`: "random" or "basic" (BasicVariantGenerator; "grid" is an
// alias). `options`: a JSON object of the algorithm's options. Throws
// tune::ConfigError with key() naming the offending option, for an unknown
// algorithm (key "algorithm") or an unknown or invalid option.
std::unique_ptr<Searcher> make_searcher(const std::string& algorithm, const Json& options,
                                        const SearcherContext& context);

}  // namespace tune::search
