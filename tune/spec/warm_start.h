// Warm starts: the trials of earlier experiments (a sweep's warm_start
// directories), read from their databases for this experiment's searcher
// (search::Searcher::warm_start).
//
// Each trial that reported a result gives its config and its last result.
// The config is mapped onto this experiment's space: a searched parameter
// the earlier trial lacks (one added since) is drawn at random from its
// domain, the same draws for the same seed; values the earlier trial had
// for parameters no longer searched stay in its config, unread. A value
// outside a domain's bounds or choices makes the searcher leave the trial
// out. The notes say, per directory, how many trials it gave and which
// parameters differ, for the run's log.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "search/param_space.h"
#include "search/searcher.h"

namespace tune {

struct WarmStart {
  std::vector<search::PriorTrial> trials;
  std::vector<std::string> notes;
};

// Throws ConfigError (key "warm_start") when a directory holds no
// experiment database.
WarmStart load_warm_start(const std::vector<std::filesystem::path>& dirs, const ParamSpace& space,
                          uint64_t seed);

}  // namespace tune
