// ConcurrencyLimiter: wraps any searcher so that at most `max_concurrent`
// of its trials are live (suggested and not yet complete) at once; beyond
// that suggest() answers kNotReady. Ray Tune's ConcurrencyLimiter.
// Model-based searchers learn more per trial with a small limit. A trial a
// scheduler paused is not live (as TuneBOHB counts): HyperBand's brackets
// fill while their first trials wait at a milestone.
#pragma once

#include <memory>
#include <set>

#include "search/searcher.h"

namespace tune::search {

class ConcurrencyLimiter final : public Searcher {
 public:
  // Throws ConfigError (key "max_concurrent") unless max_concurrent >= 1.
  ConcurrencyLimiter(std::unique_ptr<Searcher> inner, int64_t max_concurrent);

  void set_search_properties(const std::string& metric, Mode mode,
                             const ParamSpace& space) override;
  void set_objectives(const std::vector<Objective>& objectives, const ParamSpace& space) override;
  size_t warm_start(const std::vector<PriorTrial>& trials) override {
    return inner_->warm_start(trials);
  }
  Suggestion suggest(const std::string& trial_id) override;
  void on_trial_result(const std::string& trial_id, const Json& result) override;
  void on_trial_complete(const std::string& trial_id, const Json* last_result, bool error) override;
  void on_trial_pause(const std::string& trial_id) override;
  void on_trial_unpause(const std::string& trial_id) override;
  std::string kind() const override { return inner_->kind(); }  // the wrapped one's
  Json save() const override;
  void restore(const Json& state) override;
  int max_pending_trials() const override;

  const Searcher& inner() const { return *inner_; }

 private:
  std::unique_ptr<Searcher> inner_;
  int64_t max_concurrent_;
  std::set<std::string> live_;
  std::set<std::string> paused_;  // suggested, not complete, not live
};

}  // namespace tune::search
