#include "tune/plugin_kind.h"

namespace tune {

std::string_view plugin_kind(const std::shared_ptr<search::Searcher>& searcher) {
  const auto* named = std::get_deleter<NamedPlugin>(searcher);
  return named ? named->kind : "custom";
}

std::string_view plugin_kind(const std::shared_ptr<schedulers::TrialScheduler>& scheduler) {
  const auto* named = std::get_deleter<NamedPlugin>(scheduler);
  return named ? named->kind : "custom";
}

}  // namespace tune
