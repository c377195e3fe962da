// The controller's open-file limit: raised to the hard one, and a warning
// with the numbers when even that cannot hold the trials that may run.
#include "tune/system/file_limit.h"

#include <doctest/doctest.h>
#include <sys/resource.h>

namespace tune {
namespace {

TEST_CASE("file limit: the soft limit goes up to the hard one") {
  rlimit before{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &before) == 0);
  if (before.rlim_max == RLIM_INFINITY || before.rlim_max < 300) return;  // nothing to show here
  rlimit lowered = before;
  lowered.rlim_cur = 256;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  CHECK(current_file_limit().soft == 256);
  const FileLimit raised = raise_file_limit();
  CHECK(raised.soft == static_cast<int64_t>(before.rlim_max));
  CHECK(raised.hard == static_cast<int64_t>(before.rlim_max));
  setrlimit(RLIMIT_NOFILE, &before);
}

TEST_CASE("file limit: 1,000 trials x 4 ranks need more than 8,000 descriptors") {
  CHECK(descriptors_needed(4000) > 8000);
  CHECK_FALSE(file_limit_warning({20000, 20000}, 1000, 4));
  const auto warning = file_limit_warning({1024, 4096}, 1000, 4);
  REQUIRE(warning);
  // The numbers, what to raise, and the concurrency that fits.
  CHECK(warning->find("1000 trials x 4 ranks") != std::string::npos);
  CHECK(warning->find("its limit is 1024 (hard limit 4096)") != std::string::npos);
  CHECK(warning->find("ulimit -Hn") != std::string::npos);
  CHECK(warning->find("max_concurrent_trials to at most 64") != std::string::npos);
}

}  // namespace
}  // namespace tune
