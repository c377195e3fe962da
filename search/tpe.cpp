#include "search/tpe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "search/internal/parzen.h"

namespace tune::search {
namespace {

using Observation = ModelBasedSearcher::Observation;

}  // namespace

TpeSearcher::TpeSearcher(TpeOptions options)
    : ModelBasedSearcher("tpe", options.base), options_(std::move(options)) {
  if (options_.n_ei_candidates < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.n_ei_candidates), {}, 0,
                      "n_ei_candidates");
  }
  if (!(options_.gamma > 0 && options_.gamma <= 1)) {
    throw ConfigError(fmt::format("must lie in (0, 1], got {}", options_.gamma), {}, 0, "gamma");
  }
  if (options_.gamma_cap < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.gamma_cap), {}, 0,
                      "gamma_cap");
  }
  if (!(options_.prior_weight > 0) || !std::isfinite(options_.prior_weight)) {
    throw ConfigError(fmt::format("must be > 0, got {}", options_.prior_weight), {}, 0,
                      "prior_weight");
  }
}

std::vector<double> TpeSearcher::propose(Rng& rng) {
  // Everything the model sees: completed trials, then liars for running ones.
  std::vector<Observation> liars;
  if (options_.constant_liar) {
    liars = running();
    for (Observation& o : liars) o.loss = std::numeric_limits<double>::infinity();
  }
  std::vector<const Observation*> trials;
  trials.reserve(observations().size() + liars.size());
  for (const Observation& o : observations()) trials.push_back(&o);
  for (const Observation& o : liars) trials.push_back(&o);
  std::sort(trials.begin(), trials.end(), [](const Observation* a, const Observation* b) {
    return a->loss != b->loss ? a->loss < b->loss : a->index < b->index;
  });
  const auto n = static_cast<double>(trials.size());
  const auto n_below =
      std::min<size_t>(static_cast<size_t>(std::min(std::ceil(options_.gamma * n),
                                                    static_cast<double>(options_.gamma_cap))),
                       trials.size());
  // Each group oldest first: the weights ramp over trial order.
  auto by_index = [](const Observation* a, const Observation* b) { return a->index < b->index; };
  std::vector<const Observation*> below(trials.begin(), trials.begin() + n_below);
  std::vector<const Observation*> above(trials.begin() + n_below, trials.end());
  std::sort(below.begin(), below.end(), by_index);
  std::sort(above.begin(), above.end(), by_index);
  auto points = [](const std::vector<const Observation*>& group) {
    std::vector<const double*> out;
    out.reserve(group.size());
    for (const Observation* o : group) out.push_back(o->x.data());
    return out;
  };

  const auto& dims = encoding().dims();
  const bool multivariate = options_.multivariate;
  const detail::ParzenEstimator l(dims, points(below), options_.prior_weight, multivariate);
  const detail::ParzenEstimator g(dims, points(above), options_.prior_weight, multivariate);
  const auto m = static_cast<size_t>(options_.n_ei_candidates);

  if (multivariate) {
    std::vector<std::vector<double>> candidates;
    for (size_t c = 0; c < m; ++c) candidates.push_back(l.sample_joint(rng));
    std::vector<double> log_l, log_g;
    l.log_pdf_joint(candidates, log_l);
    g.log_pdf_joint(candidates, log_g);
    size_t best = 0;
    for (size_t c = 1; c < m; ++c) {
      if (log_l[c] - log_g[c] > log_l[best] - log_g[best]) best = c;
    }
    return candidates[best];
  }

  std::vector<double> x(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    double best_value = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < m; ++c) {
      const double value = l.sample_dim(d, rng);
      const double score = l.log_pdf_dim(d, value) - g.log_pdf_dim(d, value);
      if (c == 0 || score > best_score) {
        best_value = value;
        best_score = score;
      }
    }
    x[d] = best_value;
  }
  return x;
}

}  // namespace tune::search
