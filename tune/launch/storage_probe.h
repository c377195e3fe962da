// The storage check of a launcher whose ranks run on other machines (Slurm's
// nodes, SSH's hosts): the controller writes a random token into
// EXPERIMENT/.storage_probe/token, each node copies it into a file of its
// own there, and a node whose copy does not hold the token does not share
// the experiment directory. How a node is reached is the launcher's.
#pragma once

#include <filesystem>
#include <string>

namespace tune {

struct StorageProbe {
  std::filesystem::path dir;  // EXPERIMENT/.storage_probe, made anew
  std::string token;

  // Writes a fresh token into `dir`/token. Throws StorageError when it
  // cannot be written.
  static StorageProbe write(const std::filesystem::path& experiment_dir);

  // Whether the first line of `copy` (a node's copy) is the token.
  bool seen_in(const std::filesystem::path& copy) const;
};

}  // namespace tune
