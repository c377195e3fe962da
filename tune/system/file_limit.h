// The controller's open-file limit (RLIMIT_NOFILE).
//
// Every rank that runs costs the controller descriptors: its two
// connections to the control channel (its own and its heartbeat thread's)
// and the pidfd its exit is watched through (tune/launch/process.h). 1,000 trials
// x 4 ranks need over 12,000, far past the soft limit of 1,024 that most
// shells start with, while the hard limit is usually much higher. The
// controller raises its soft limit to the hard one when it starts (as Ray
// does), and warns when even the hard limit is too low for the ranks the
// sweep may run at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tune {

// RLIM_INFINITY reads as INT64_MAX.
struct FileLimit {
  int64_t soft = 0;
  int64_t hard = 0;
};

FileLimit current_file_limit();

// Sets the soft limit to the hard one (where the kernel allows: an
// unlimited hard limit is capped at fs.nr_open) and returns the limit in
// force afterwards; unchanged when setrlimit refuses.
FileLimit raise_file_limit();

// The descriptors a controller needs with `ranks` ranks alive at once: three
// each, and a margin for its own (the database, ZeroMQ's, logs).
int64_t descriptors_needed(int64_t ranks);

// What to tell the user when `limit` cannot hold `ranks` ranks
// (`trials` trials of `ranks_per_trial`): the numbers, and what to change.
// nullopt when it can.
std::optional<std::string> file_limit_warning(const FileLimit& limit, int64_t trials,
                                              int64_t ranks_per_trial);

}  // namespace tune
