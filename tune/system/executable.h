// The path of the running executable, as /proc/self/exe names it: where the
// CLI finds its worker, its plug-ins and its data beside itself, and what a
// C++ program's ranks start again.
#pragma once

#include <string>
#include <vector>

namespace tune {

// Throws Error when /proc/self/exe cannot be read.
std::string self_executable();

// The absolute path of tunerun's program `name` (tunerun-sim,
// tunerun-ssh-rank, ...): the first executable one in `program_dirs`, then
// beside `worker_argv0` and beside this executable (their folder, then
// their installed lib/tunerun). Empty when there is none; `looked` then
// lists every path tried, for the caller's error.
std::string find_program(const std::string& name, const std::string& worker_argv0,
                         const std::vector<std::string>& program_dirs,
                         std::vector<std::string>& looked);

}  // namespace tune
