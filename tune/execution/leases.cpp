// The lease rules (tune/execution/leases.h): pure functions, as decide.cpp's.
#include "tune/execution/leases.h"

#include <algorithm>

namespace tune {

int64_t continue_lease(const LeaseTerms& terms) {
  if (terms.synchronous || terms.winding_down) return terms.iteration;
  return std::min(terms.scheduler_through, terms.stoppers_through);
}

int64_t checkpoint_lease(const LeaseTerms& terms) {
  if (!terms.scheduler_pauses) return std::numeric_limits<int64_t>::max();
  if (terms.synchronous) return terms.iteration;
  return terms.scheduler_through;
}

bool awaits_decision(int64_t iteration, int64_t continue_through, bool with_checkpoint) {
  return iteration > continue_through || with_checkpoint;
}

}  // namespace tune
