// What the scenarios of curve_experiment.h run on in this binary: tunerun
// workers, or simulated ranks where it is compiled with
// TUNERUN_TEST_LAUNCHER="sim" (tests/sim's conformance binaries), in
// virtual time with TUNERUN_TEST_TIME="virtual" too.
#include <string_view>

#include "curve_experiment.h"

namespace tune::test {

#ifdef TUNERUN_TEST_LAUNCHER
const bool kSimulatedRanks = std::string_view(TUNERUN_TEST_LAUNCHER) == "sim";
#else
const bool kSimulatedRanks = false;
#endif
#ifdef TUNERUN_TEST_TIME
const bool kVirtualTime = std::string_view(TUNERUN_TEST_TIME) == "virtual";
#else
const bool kVirtualTime = false;
#endif

}  // namespace tune::test
