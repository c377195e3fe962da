#include "schedulers/internal/mo_asha.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"

namespace tune::schedulers {

MoAshaScheduler::MoAshaScheduler(MoAshaOptions options) : options_(std::move(options)) {
  auto check = [](bool ok, const char* key, const std::string& message) {
    if (!ok) throw ConfigError::at_key(key, "mo_asha scheduler: " + message);
  };
  check(options_.max_t > 0, "max_t", "max_t must be > 0");
  check(options_.grace_period > 0, "grace_period", "grace_period must be > 0");
  check(options_.max_t >= options_.grace_period, "grace_period", "grace_period must be <= max_t");
  check(options_.reduction_factor > 1, "reduction_factor", "reduction_factor must be > 1");
  check(!options_.time_attr.empty(), "time_attr", "time_attr must not be empty");
  // ASHA's rungs for bracket 0: grace_period * rf^k below max_t, highest first.
  const auto count = static_cast<int64_t>(
      std::log(options_.max_t / options_.grace_period) / std::log(options_.reduction_factor) + 1);
  for (int64_t k = count - 1; k >= 0; --k) {
    rungs_.push_back(
        {options_.grace_period * std::pow(options_.reduction_factor, static_cast<double>(k)),
         {},
         {}});
  }
}

void MoAshaScheduler::set_search_properties(const std::string& metric, Mode mode) {
  if (metric.empty()) {
    throw ConfigError::at_key("metric",
                              "mo_asha ranks trials by the experiment's metrics; set metric");
  }
  objectives_ = {{metric, mode}};
}

void MoAshaScheduler::set_objectives(const std::vector<Objective>& objectives) {
  objectives_ = objectives;
}

Decision MoAshaScheduler::on_trial_result(const TrialView& trial, const Json& result) {
  const auto t = result.find(options_.time_attr);
  if (t == result.end() || !t->is_number()) return Decision::kContinue;
  core::Point losses;
  for (const Objective& o : objectives_) {
    const auto v = result.find(o.metric);
    if (v == result.end() || !v->is_number() || !std::isfinite(v->get<double>())) {
      return Decision::kContinue;
    }
    losses.push_back(o.mode == Mode::kMax ? -v->get<double>() : v->get<double>());
  }
  if (t->get<double>() >= options_.max_t) return Decision::kStop;
  for (Rung& rung : rungs_) {
    if (t->get<double>() < rung.milestone) continue;
    const bool seen = std::any_of(rung.recorded.begin(), rung.recorded.end(),
                                  [&](const auto& r) { return r.first == trial.trial_id; });
    if (seen) break;  // decided at this rung already
    rung.recorded.emplace_back(trial.trial_id, std::move(losses));
    rung.violations.push_back(core::constraint_violation(result));
    std::vector<core::Point> points;
    for (const auto& [id, p] : rung.recorded) points.push_back(p);
    const auto order = core::elite_order(points, rung.violations);
    const size_t position =
        std::find(order.begin(), order.end(), points.size() - 1) - order.begin();
    const auto keep = static_cast<size_t>(
        std::ceil(static_cast<double>(points.size()) / options_.reduction_factor));
    return position < keep ? Decision::kContinue : Decision::kStop;
  }
  return Decision::kContinue;
}

int64_t MoAshaScheduler::continues_through(const TrialView& trial, int64_t iteration) const {
  if (options_.time_attr != "training_iteration") return iteration;
  // Decisions come at rung milestones and max_t only.
  auto next = static_cast<int64_t>(std::ceil(options_.max_t));
  for (const Rung& rung : rungs_) {
    const auto at = static_cast<int64_t>(std::ceil(rung.milestone));
    const bool seen = std::any_of(rung.recorded.begin(), rung.recorded.end(),
                                  [&](const auto& r) { return r.first == trial.trial_id; });
    if (at > iteration) {
      next = std::min(next, at);
    } else if (!seen) {
      return iteration;  // a rung reached without a value yet
    }
  }
  return std::max(iteration, next - 1);
}

Json MoAshaScheduler::save() const {
  Json rungs = Json::array();
  for (const Rung& rung : rungs_) {
    Json recorded = Json::array();
    for (size_t i = 0; i < rung.recorded.size(); ++i) {
      recorded.push_back({rung.recorded[i].first, rung.recorded[i].second, rung.violations[i]});
    }
    rungs.push_back({{"milestone", rung.milestone}, {"recorded", std::move(recorded)}});
  }
  return {{"rungs", std::move(rungs)}};
}

void MoAshaScheduler::restore(const Json& state) {
  try {
    const Json& rungs = state.at("rungs");
    if (rungs.size() != rungs_.size()) {
      throw Error("MO-ASHA restore: the saved rungs do not match the scheduler's options");
    }
    for (size_t r = 0; r < rungs_.size(); ++r) {
      rungs_[r].recorded.clear();
      rungs_[r].violations.clear();
      for (const Json& entry : rungs[r].at("recorded")) {
        rungs_[r].recorded.emplace_back(entry.at(0).get<std::string>(),
                                        entry.at(1).get<core::Point>());
        rungs_[r].violations.push_back(entry.at(2).get<double>());
      }
    }
  } catch (const Json::exception& e) {
    throw Error(fmt::format("malformed MO-ASHA state: {}", e.what()));
  }
}

std::string MoAshaScheduler::debug_string() const {
  std::string out = fmt::format("MO-ASHA ({} objectives):", objectives_.size());
  for (const Rung& rung : rungs_) {
    out += fmt::format(" | Iter {:g}: {} recorded", rung.milestone, rung.recorded.size());
  }
  return out;
}

}  // namespace tune::schedulers
