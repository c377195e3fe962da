// How the model-based searchers (TPE, GP-BO) see a ParamSpace: a vector of
// numbers, one per searchable domain.
//
// A numeric domain maps onto [0, 1] along its natural scale: linear for
// uniform/randint, log for the log kinds, the normal CDF for randn (so the
// uniform prior on [0, 1] is the domain's own distribution). Integer and
// quantized domains widen their bounds by half a step each side, as Optuna
// does, so every lattice value owns an equal slice of [0, 1]; decoding rounds
// back onto the lattice. A categorical domain (choice, or grid_search, which
// model-based searchers treat as a choice) is its value's index.
#pragma once

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "search/param_space.h"

namespace tune::search::detail {

struct Dimension {
  std::string path;               // dotted, e.g. "model.width"
  std::vector<std::string> keys;  // the path split at '.'
  Domain domain;
  double low = 0;   // numeric: the bounds on the transformed scale, widened
  double high = 1;  // by half a step for integer and quantized kinds
  // Integer and quantized kinds (not qrandn): how many values the lattice
  // has; each owns an equal slice of [0, 1] on a linear scale. 0 otherwise.
  double lattice_size = 0;

  bool categorical() const { return domain.is_categorical(); }
  size_t num_choices() const { return domain.values().size(); }
};

class SpaceEncoding {
 public:
  SpaceEncoding() = default;
  explicit SpaceEncoding(const ParamSpace& space);

  const std::vector<Dimension>& dims() const { return dims_; }
  size_t size() const { return dims_.size(); }

  // The config's values as a point: numeric in [0, 1], categorical the index.
  // Throws ConfigError (key = the dotted path) when a value is missing, not a
  // number, or not one of a categorical's values.
  std::vector<double> encode(const Json& config) const;

  // The config for a point: numeric values mapped back and snapped onto the
  // domain's lattice, categorical indices rounded and clamped.
  Json decode(const std::vector<double>& x) const;

  // The point where `x` runs: encode(decode(x)), without building the
  // config. Integer and quantized values move to their lattice value's
  // point, categorical indices are rounded; continuous values stay.
  std::vector<double> snap(std::vector<double> x) const;

  // A config drawn from the domains' own distributions (grid_search drawn
  // uniformly like a choice), for the random start-up phase.
  Json sample(Rng& rng) const;

 private:
  ParamSpace space_;
  std::vector<Dimension> dims_;
};

// Whether two encoded points are the same config (equal to 1e-12).
inline bool same_point(const std::vector<double>& a, const std::vector<double>& b) {
  for (size_t d = 0; d < a.size(); ++d) {
    if (std::abs(a[d] - b[d]) > 1e-12) return false;
  }
  return true;
}

// The Rng for suggestion `index`, from (seed, index) alone, so restoring a
// searcher needs only its counter. seed_seq and mt19937_64 are fully
// specified by the standard, so draws match across platforms.
Rng suggestion_rng(uint64_t seed, uint64_t index);

// A uniform double in [0, 1) from one draw (the same formula as Domain's).
inline double unit(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A standard normal from two uniform draws (Box-Muller).
inline double normal_draw(Rng& rng) {
  const double u1 = unit(rng);
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Overlays `point` on `config`: objects merge key by key, anything else
// replaces what was there.
void deep_merge(Json& config, const Json& point);

}  // namespace tune::search::detail
