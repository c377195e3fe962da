// A fresh directory per test and process for the torch tests' files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace train::testing {

// <tmp>/tunerun_torch_test_<name>_<pid>, emptied and created.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tunerun_torch_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace train::testing
