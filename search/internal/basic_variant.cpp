#include "search/internal/basic_variant.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "search/internal/space_encoding.h"

namespace tune::search {
BasicVariantGenerator::BasicVariantGenerator(BasicVariantOptions options)
    : options_(std::move(options)) {
  if (options_.num_samples < 1 && options_.num_samples != -1) {
    throw ConfigError::at_key(
        "num_samples",
        fmt::format("must be at least 1, or -1 for unlimited, got {}", options_.num_samples));
  }
  for (const Json& point : options_.points_to_evaluate) {
    if (!point.is_object()) {
      throw ConfigError::at_key("points_to_evaluate",
                                "each point must be a table, got " + point.dump());
    }
  }
}

void BasicVariantGenerator::set_search_properties(const std::string& metric, Mode mode,
                                                  const ParamSpace& space) {
  space_ = space;
}

int64_t BasicVariantGenerator::total_trials() const {
  if (options_.num_samples == -1) return -1;
  const auto cells = static_cast<int64_t>(space_.num_grid_cells());
  return static_cast<int64_t>(options_.points_to_evaluate.size()) + options_.num_samples * cells;
}

Suggestion BasicVariantGenerator::suggest(const std::string& trial_id) {
  const int64_t total = total_trials();
  if (total != -1 && next_ >= total) return Suggestion::finished();

  const auto index = static_cast<uint64_t>(next_++);
  Rng rng = detail::suggestion_rng(options_.seed, index);
  const auto& points = options_.points_to_evaluate;
  if (index < points.size()) {
    Json config = space_.resolve(0, rng);
    detail::deep_merge(config, points[index]);
    return Suggestion::of(std::move(config));
  }
  // All cells of repeat 0, then all cells of repeat 1..., as Ray orders them.
  const uint64_t sample = index - points.size();
  return Suggestion::of(space_.resolve(sample % space_.num_grid_cells(), rng));
}

Json BasicVariantGenerator::save() const { return {{"next", next_}}; }

void BasicVariantGenerator::restore(const Json& state) {
  const auto it = state.find("next");  // end() when `state` is not an object
  if (it == state.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    throw Error("malformed BasicVariantGenerator state " + state.dump() +
                "; expected {\"next\": <count of configs suggested>}");
  }
  next_ = it->get<int64_t>();
}

}  // namespace tune::search
