// IterationCollector: the reports of one trial's ranks, gathered until every
// rank has reported an iteration, then merged into one result: rank 0's
// metrics, with the metrics named in rank 0's `reduce` reduced over ranks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/protocol.h"

namespace tune {

// One complete iteration, merged over ranks.
struct CompleteIteration {
  int64_t iteration = 0;
  Json metrics;                 // the user's metrics (reduced where asked)
  bool checkpoint = false;      // some rank staged checkpoint files for it
  double time_this_iter_s = 0;  // rank 0's
  double time_total_s = 0;      // rank 0's, since this run started
};

class IterationCollector {
 public:
  // Starts over for a run of `world_size` ranks that resumes after
  // `start_iteration` (0 for a fresh start).
  void reset(int world_size, int64_t start_iteration);

  // Adds `rank`'s report; returns the iteration once every rank reported it.
  // Throws ProtocolError for a rank out of range or a report out of order
  // (iteration != the rank's previous + 1).
  std::optional<CompleteIteration> add(int rank, const protocol::Report& report);

 private:
  struct Pending {
    int ranks = 0;
    std::vector<Json> metrics;  // per rank
    std::map<std::string, ReduceOp> reduce;
    bool checkpoint = false;
    double time_this_iter_s = 0;
    double time_total_s = 0;
  };
  static Json merge(Pending& p);

  int world_size_ = 0;
  std::vector<int64_t> last_;  // per rank: the last iteration reported
  std::map<int64_t, Pending> pending_;
};

}  // namespace tune
