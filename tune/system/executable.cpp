#include "tune/system/executable.h"

#include <filesystem>
#include <system_error>

#include "core/errors.h"

namespace tune {

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot resolve /proc/self/exe: " + ec.message());
  return path.string();
}

}  // namespace tune
