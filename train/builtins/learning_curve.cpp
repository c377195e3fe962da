#include "train/builtins/learning_curve.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "core/errors.h"

namespace train {

LearningCurve LearningCurve::from_config(const tune::Config& config) {
  const LearningCurve d;
  return {.iterations = config.get<int64_t>("iterations", d.iterations),
          .ceiling = config.get<double>("ceiling", d.ceiling),
          .speed = config.get<double>("speed", d.speed),
          .sleep_s = config.get<double>("sleep_s", d.sleep_s),
          .checkpoint_every = config.get<int64_t>("checkpoint_every", d.checkpoint_every),
          .checkpoint_for_scheduler =
              config.get<bool>("checkpoint_for_scheduler", d.checkpoint_for_scheduler),
          .fail_at = config.get<int64_t>("fail_at", d.fail_at),
          .crash_at = config.get<int64_t>("crash_at", d.crash_at),
          .hang_at = config.get<int64_t>("hang_at", d.hang_at),
          .vanish_at = config.get<int64_t>("vanish_at", d.vanish_at)};
}

tune::Json LearningCurve::metrics(int64_t t) const {
  const double accuracy = ceiling * (1 - std::exp(-speed * static_cast<double>(t)));
  return {{"accuracy", accuracy}, {"loss", 1 - accuracy}};
}

void write_curve_checkpoint(const std::filesystem::path& dir, int64_t t) {
  std::ofstream(dir / "state.json") << tune::Json{{"t", t}};
}

int64_t read_curve_checkpoint(const std::filesystem::path& dir) {
  const auto file = dir / "state.json";
  try {
    std::ifstream in(file);
    return tune::Json::parse(in).at("t").get<int64_t>();
  } catch (const std::exception& e) {
    throw tune::Error(
        fmt::format("cannot read the curve's checkpoint {}: {}", file.string(), e.what()));
  }
}

}  // namespace train
