#include "tune/system/gpus.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

namespace tune {

std::vector<std::string> visible_gpus() {
  std::vector<std::string> ids;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string list = visible;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      std::string id = list.substr(start, comma - start);
      // CUDA stops at the first invalid entry; "-1" is the usual way to hide all.
      if (id.empty() || id[0] == '-') break;
      ids.push_back(std::move(id));
      start = comma + 1;
    }
    return ids;
  }
  std::error_code ec;
  const std::regex device("nvidia([0-9]+)");
  std::vector<int> numbers;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, device)) numbers.push_back(std::stoi(m[1]));
  }
  std::sort(numbers.begin(), numbers.end());
  for (int n : numbers) ids.push_back(std::to_string(n));
  return ids;
}

size_t GpuPool::num_free() const {
  return static_cast<size_t>(std::count(busy_.begin(), busy_.end(), false));
}

std::optional<std::vector<std::string>> GpuPool::take(size_t n) {
  if (num_free() < n) return std::nullopt;
  std::vector<std::string> taken;
  for (size_t i = 0; i < ids_.size() && taken.size() < n; ++i) {
    if (!busy_[i]) {
      busy_[i] = true;
      taken.push_back(ids_[i]);
    }
  }
  return taken;
}

void GpuPool::give_back(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    auto it = std::find(ids_.begin(), ids_.end(), id);
    if (it != ids_.end()) busy_[static_cast<size_t>(it - ids_.begin())] = false;
  }
}

}  // namespace tune
