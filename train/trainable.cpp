#include "train/trainable.h"

#include <map>

namespace train {
namespace {

std::map<std::string, TrainFunc>& registry() {
  static std::map<std::string, TrainFunc> functions;
  return functions;
}

}  // namespace

void register_trainable(const std::string& name, TrainFunc func) {
  registry()[name] = std::move(func);
}

const TrainFunc* find_trainable(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> trainable_names() {
  std::vector<std::string> names;
  for (const auto& [name, func] : registry()) names.push_back(name);
  return names;
}

}  // namespace train
