#include "tune/launch/storage_probe.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <random>

#include "core/errors.h"

namespace tune {

StorageProbe StorageProbe::write(const std::filesystem::path& experiment_dir) {
  StorageProbe probe;
  probe.dir = std::filesystem::absolute(experiment_dir) / ".storage_probe";
  std::filesystem::remove_all(probe.dir);
  std::filesystem::create_directories(probe.dir);
  probe.token = fmt::format("{:016x}{:016x}", std::random_device{}(),
                            std::chrono::steady_clock::now().time_since_epoch().count());
  std::ofstream out(probe.dir / "token");
  out << probe.token;
  if (!out.flush()) {
    throw StorageError(fmt::format("cannot write {}", (probe.dir / "token").string()));
  }
  return probe;
}

bool StorageProbe::seen_in(const std::filesystem::path& copy) const {
  std::ifstream in(copy);
  std::string seen;
  std::getline(in, seen);
  return seen == token;
}

}  // namespace tune
