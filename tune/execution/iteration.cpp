#include "tune/execution/iteration.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace tune {

void IterationCollector::reset(int world_size, int64_t start_iteration) {
  world_size_ = world_size;
  last_.assign(static_cast<size_t>(world_size), start_iteration);
  pending_.clear();
}

std::optional<CompleteIteration> IterationCollector::add(int rank, const protocol::Report& report) {
  if (rank < 0 || rank >= world_size_) {
    throw ProtocolError(fmt::format("a report from rank {} of {}", rank, world_size_));
  }
  const int64_t previous = last_[rank];
  if (report.iteration != previous + 1) {
    throw ProtocolError(
        fmt::format("rank {} reported iteration {} after {}", rank, report.iteration, previous));
  }
  last_[rank] = report.iteration;
  Pending& p = pending_[report.iteration];
  if (p.metrics.empty()) p.metrics.resize(static_cast<size_t>(world_size_));
  ++p.ranks;
  p.metrics[rank] = report.metrics;
  p.checkpoint = p.checkpoint || report.checkpoint;
  if (rank == 0) {
    p.reduce = report.reduce;
    p.time_this_iter_s = report.time_this_iter_s;
    p.time_total_s = report.time_total_s;
  }
  if (p.ranks < world_size_) return std::nullopt;
  CompleteIteration done{report.iteration, merge(p), p.checkpoint, p.time_this_iter_s,
                         p.time_total_s};
  pending_.erase(report.iteration);
  return done;
}

Json IterationCollector::merge(Pending& p) {
  Json metrics = std::move(p.metrics[0]);
  for (const auto& [name, op] : p.reduce) {
    double acc = 0;
    int n = 0;
    for (size_t rank = 0; rank < p.metrics.size(); ++rank) {
      const Json& m = rank == 0 ? metrics : p.metrics[rank];
      auto it = m.find(name);
      if (it == m.end() || !it->is_number()) continue;
      const double v = it->get<double>();
      if (n++ == 0) {
        acc = v;
      } else if (op == ReduceOp::kMin) {
        acc = std::min(acc, v);
      } else if (op == ReduceOp::kMax) {
        acc = std::max(acc, v);
      } else {
        acc += v;
      }
    }
    if (n > 0) metrics[name] = op == ReduceOp::kMean ? acc / n : acc;
  }
  return metrics;
}

}  // namespace tune
