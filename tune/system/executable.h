// The path of the running executable, as /proc/self/exe names it: where the
// CLI finds its worker, its plug-ins and its data beside itself, and what a
// C++ program's ranks start again.
#pragma once

#include <string>

namespace tune {

// Throws Error when /proc/self/exe cannot be read.
std::string self_executable();

}  // namespace tune
