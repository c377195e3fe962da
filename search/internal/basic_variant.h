// BasicVariantGenerator: Ray Tune's default searcher. Random sampling plus
// grid expansion: every grid cell is repeated `num_samples` times, each time
// with fresh draws for the non-grid domains. With 3 grid cells and
// num_samples = 2 it suggests 6 configs, then kFinished.
//
// Deterministic: the same space, seed and options give the same configs in
// the same order. `points_to_evaluate` (user-given configs, possibly partial:
// missing keys are drawn as usual) come first.
#pragma once

#include <cstdint>
#include <vector>

#include "search/searcher.h"

namespace tune::search {

struct BasicVariantOptions {
  int64_t num_samples = 1;  // repeats of the whole grid; -1 = unlimited (Ray's semantics)
  uint64_t seed = 0;        // the same seed gives the same configs
  std::vector<Json> points_to_evaluate;  // suggested first, in order
};

class BasicVariantGenerator final : public Searcher {
 public:
  explicit BasicVariantGenerator(BasicVariantOptions options);

  void set_search_properties(const std::string& metric, Mode mode,
                             const ParamSpace& space) override;
  // Random and grid search need no metric: several objectives are welcome.
  void set_objectives(const std::vector<Objective>& objectives, const ParamSpace& space) override {
    space_ = space;
  }
  Suggestion suggest(const std::string& trial_id) override;
  Json save() const override;
  std::string kind() const override { return "random"; }
  void restore(const Json& state) override;
  int max_pending_trials() const override { return 16; }  // Ray: TUNE_MAX_PENDING_TRIALS_PG

  // Total configs this generator will suggest; -1 when unlimited.
  int64_t total_trials() const;

 private:
  BasicVariantOptions options_;
  ParamSpace space_;
  int64_t next_ = 0;  // configs suggested so far, points_to_evaluate included
};

}  // namespace tune::search
