#include "schedulers/internal/mutations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "search/domain_spec.h"

namespace tune::schedulers::detail {

double unit(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

namespace {

size_t pick(size_t n, Rng& rng) {
  return std::min(static_cast<size_t>(unit(rng) * static_cast<double>(n)), n - 1);
}

bool is_domain_spec(const Json& spec) {
  if (!spec.is_object() || spec.size() != 1) return false;
  const auto& kinds = domain_spec_kinds();
  return std::find(kinds.begin(), kinds.end(), spec.begin().key()) != kinds.end();
}

Json draw(const Mutation& m, Rng& rng) {
  if (m.list) return (*m.list)[pick(m.list->size(), rng)];
  if (m.domain) return m.domain->sample(rng);
  Json out = Json::object();
  for (const auto& [key, sub] : m.nested) out[key] = draw(sub, rng);
  return out;
}

}  // namespace

std::map<std::string, Mutation> parse_mutations(const Json& spec, const std::string& prefix) {
  if (!spec.is_object()) {
    throw ConfigError::at_key(prefix, "hyperparam_mutations must be a table of keys to mutate");
  }
  std::map<std::string, Mutation> out;
  for (const auto& [key, value] : spec.items()) {
    const std::string path = prefix + "." + key;
    Mutation m;
    try {
      if (value.is_array()) {
        if (value.empty()) throw ConfigError("a list of values must not be empty");
        m.list = value.get<std::vector<Json>>();
      } else if (is_domain_spec(value)) {
        m.domain = domain_from_spec(value);
        if (m.domain->is_grid()) throw ConfigError("grid_search cannot be resampled");
      } else if (value.is_object()) {
        if (value.empty()) throw ConfigError("a nested table must not be empty");
        m.nested = parse_mutations(value, path);
      } else {
        throw ConfigError(
            fmt::format("expected a list of values, a domain such as "
                        "{{ loguniform = [1e-4, 1e-1] }} or a table, got {}",
                        value.dump()));
      }
    } catch (const ConfigError& e) {
      if (!e.key().empty()) throw;
      throw ConfigError::at_key(path, fmt::format("{}: {}", path, e.message()));
    }
    out.emplace(key, std::move(m));
  }
  return out;
}

Json explore(const Json& config, const std::map<std::string, Mutation>& mutations,
             const ExploreParams& params, Rng& rng) {
  Json out = config.is_object() ? config : Json::object();
  for (const auto& [key, m] : mutations) {
    const Json* current = config.is_object() && config.contains(key) ? &config.at(key) : nullptr;
    if (!m.nested.empty()) {
      out[key] = explore(current ? *current : Json::object(), m.nested, params, rng);
      continue;
    }
    if (current == nullptr) {  // not in the config: start it from the distribution
      out[key] = draw(m, rng);
      continue;
    }
    if (m.list) {
      auto it = std::find(m.list->begin(), m.list->end(), *current);
      if (unit(rng) < params.resample_probability || it == m.list->end()) {
        out[key] = (*m.list)[pick(m.list->size(), rng)];
      } else {
        const int shift = pick(2, rng) == 0 ? -1 : 1;  // random.choice([-1, 1])
        const auto old_idx = static_cast<int64_t>(it - m.list->begin());
        const int64_t idx =
            std::clamp<int64_t>(old_idx + shift, 0, static_cast<int64_t>(m.list->size()) - 1);
        out[key] = (*m.list)[static_cast<size_t>(idx)];
      }
      continue;
    }
    // A domain. Ray perturbs any domain (choice included) by a factor; a
    // value that is not a number can only be resampled.
    if (unit(rng) < params.resample_probability || !current->is_number()) {
      out[key] = m.domain->sample(rng);
    } else {
      const double factor =
          params.perturbation_factors[pick(params.perturbation_factors.size(), rng)];
      out[key] = current->get<double>() * factor;
    }
    if (current->is_number_integer() && out[key].is_number()) {
      out[key] = static_cast<int64_t>(std::trunc(out[key].get<double>()));  // Python int()
    }
  }
  return out;
}

}  // namespace tune::schedulers::detail
