// Repeater: wraps any searcher so that each config it suggests runs
// `repeat` times (for noisy objectives); when all trials of a group have
// completed, the inner searcher hears one completion, for the group's first
// trial, whose metric is the mean over the group (trials without a finite
// metric left out; an ERROR when none has one). Ray Tune's Repeater,
// including the "__trial_index__" key (0..repeat-1) added to each config
// when set_index is on.
//
// The inner searcher's budget counts groups: give it num_samples / repeat.
// Intermediate results and pauses are not forwarded (they belong to one
// repetition).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "search/searcher.h"

namespace tune::search {

class Repeater final : public Searcher {
 public:
  // Throws ConfigError (key "repeat") unless repeat >= 1.
  Repeater(std::unique_ptr<Searcher> inner, int64_t repeat, bool set_index = true);

  void set_search_properties(const std::string& metric, Mode mode,
                             const ParamSpace& space) override;
  Suggestion suggest(const std::string& trial_id) override;
  void on_trial_complete(const std::string& trial_id, const Json* last_result, bool error) override;
  std::string kind() const override { return inner_->kind(); }  // the wrapped one's
  Json save() const override;
  void restore(const Json& state) override;
  int max_pending_trials() const override;

 private:
  struct Group {
    Json config;
    int64_t handed_out = 0;
    int64_t completed = 0;
    std::vector<double> scores;
  };

  std::unique_ptr<Searcher> inner_;
  int64_t repeat_;
  bool set_index_;
  std::string metric_;
  std::map<std::string, Group> groups_;          // by the group's first trial id
  std::map<std::string, std::string> group_of_;  // trial id -> first trial id
  std::string filling_;                          // the group still handing out repetitions, or ""
};

}  // namespace tune::search
