#include "search/internal/nsga2.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/pareto.h"

namespace tune::search {
namespace {

ModelBasedOptions with_population(ModelBasedOptions base, int64_t population_size) {
  base.n_startup_trials = population_size;
  return base;
}

void check_probability(double p, const char* key) {
  if (!(p >= 0 && p <= 1)) {
    throw ConfigError::at_key(key, fmt::format("must lie in [0, 1], got {}", p));
  }
}

// Simulated binary crossover (Deb and Agrawal 1995) of two values in [0, 1]:
// one of the two children, each side as likely.
double sbx(double a, double b, double eta, Rng& rng) {
  if (std::abs(a - b) < 1e-14) return a;
  const double y1 = std::min(a, b), y2 = std::max(a, b), gap = y2 - y1;
  const double u = detail::unit(rng);
  // The spread factor for a child whose side reaches `room` beyond its parent.
  auto spread = [&](double room) {
    const double beta = 1 + 2 * room / gap;
    const double alpha = 2 - std::pow(beta, -(eta + 1));
    return u <= 1 / alpha ? std::pow(u * alpha, 1 / (eta + 1))
                          : std::pow(1 / (2 - u * alpha), 1 / (eta + 1));
  };
  const double child = detail::unit(rng) < 0.5 ? 0.5 * (y1 + y2 - spread(y1) * gap)
                                               : 0.5 * (y1 + y2 + spread(1 - y2) * gap);
  return std::clamp(child, 0.0, 1.0);
}

// Polynomial mutation (Deb and Goyal 1996) of a value in [0, 1].
double polynomial_mutation(double y, double eta, Rng& rng) {
  const double u = detail::unit(rng);
  const double power = 1 / (eta + 1);
  const double delta =
      u < 0.5 ? std::pow(2 * u + (1 - 2 * u) * std::pow(1 - y, eta + 1), power) - 1
              : 1 - std::pow(2 * (1 - u) + 2 * (u - 0.5) * std::pow(y, eta + 1), power);
  return std::clamp(y + delta, 0.0, 1.0);
}

}  // namespace

Nsga2Searcher::Nsga2Searcher(Nsga2Options options)
    : ModelBasedSearcher("nsga2", with_population(options.base, options.population_size)),
      options_(std::move(options)) {
  if (options_.population_size < 2) {
    throw ConfigError::at_key("population_size",
                              fmt::format("must be at least 2, got {}", options_.population_size));
  }
  check_probability(options_.crossover_prob, "crossover_prob");
  check_probability(options_.swapping_prob, "swapping_prob");
  if (options_.mutation_prob >= 0) check_probability(options_.mutation_prob, "mutation_prob");
  if (!(options_.eta_crossover >= 0)) {
    throw ConfigError::at_key("eta_crossover",
                              fmt::format("must be >= 0, got {}", options_.eta_crossover));
  }
  if (!(options_.eta_mutation >= 0)) {
    throw ConfigError::at_key("eta_mutation",
                              fmt::format("must be >= 0, got {}", options_.eta_mutation));
  }
}

std::vector<double> Nsga2Searcher::propose(Rng& rng) {
  const std::vector<Observation>& obs = observations();
  std::vector<size_t> population = core::elite_order(observed_losses(), observed_violations());
  population.resize(std::min(population.size(), static_cast<size_t>(options_.population_size)));
  // Binary tournament: of two random members, the one earlier in the order.
  auto tournament = [&] {
    const auto pick = [&] {
      return std::min<size_t>(static_cast<size_t>(detail::unit(rng) * population.size()),
                              population.size() - 1);
    };
    return population[std::min(pick(), pick())];
  };
  const std::vector<double>& first = obs[tournament()].x;
  const std::vector<double>& second = obs[tournament()].x;
  const auto& dims = encoding().dims();
  std::vector<double> child = first;
  if (detail::unit(rng) < options_.crossover_prob) {
    for (size_t d = 0; d < dims.size(); ++d) {
      const bool swap = detail::unit(rng) < options_.swapping_prob;
      if (dims[d].categorical() || options_.crossover == NsgaCrossover::kUniform) {
        if (swap) child[d] = second[d];
      } else if (swap) {
        child[d] = sbx(first[d], second[d], options_.eta_crossover, rng);
      }
    }
  }
  const double mutation_prob = options_.mutation_prob >= 0
                                   ? options_.mutation_prob
                                   : 1.0 / static_cast<double>(std::max<size_t>(dims.size(), 1));
  for (size_t d = 0; d < dims.size(); ++d) {
    if (detail::unit(rng) >= mutation_prob) continue;
    if (dims[d].categorical()) {
      const double choices = static_cast<double>(dims[d].num_choices());
      child[d] = std::min(std::floor(detail::unit(rng) * choices), choices - 1);
    } else {
      child[d] = polynomial_mutation(child[d], options_.eta_mutation, rng);
    }
  }
  return child;
}

}  // namespace tune::search
