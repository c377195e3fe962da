#include "search/internal/space_encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/errors.h"
#include "search/internal/normal.h"

namespace tune::search::detail {
namespace {

// The transformed scale: log for log kinds, the normal CDF for randn.
double forward(const Domain& domain, double value) {
  if (domain.is_log()) return std::log(value);
  if (domain.is_normal()) return norm_cdf((value - domain.mean()) / domain.sd());
  return value;
}

double backward(const Domain& domain, double t) {
  if (domain.is_log()) return std::exp(t);
  if (domain.is_normal()) {
    constexpr double kEdge = 1e-12;  // keeps Phi^-1 finite
    return domain.mean() + domain.sd() * norm_ppf(std::clamp(t, kEdge, 1 - kEdge));
  }
  return t;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> keys;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    keys.push_back(path.substr(start, dot - start));
  }
  keys.push_back(path.substr(start));
  return keys;
}

}  // namespace

SpaceEncoding::SpaceEncoding(const ParamSpace& space) : space_(space) {
  for (const auto& [path, domain_ptr] : space_.searchable_domains()) {
    Dimension dim{path, split_path(path), *domain_ptr};
    const Domain& d = dim.domain;
    if (!d.is_categorical()) {
      double lo = d.lower();
      double hi = d.upper();
      if (d.is_integer()) {
        const double step = d.q() > 0 ? d.q() : 1;
        lo = static_cast<double>(d.min_int()) - step / 2;
        hi = static_cast<double>(d.max_int()) + step / 2;
        dim.lattice_size = std::round((hi - lo) / step);
      } else if (d.q() > 0 && !d.is_normal()) {
        lo -= d.q() / 2;
        hi += d.q() / 2;
        dim.lattice_size = std::round((hi - lo) / d.q());
      }
      dim.low = d.is_normal() ? 0.0 : forward(d, lo);
      dim.high = d.is_normal() ? 1.0 : forward(d, hi);
    }
    dims_.push_back(std::move(dim));
  }
}

std::vector<double> SpaceEncoding::encode(const Json& config) const {
  std::vector<double> x;
  x.reserve(dims_.size());
  for (const Dimension& dim : dims_) {
    const Json* value = &config;
    for (const auto& key : dim.keys) {
      auto it = value->find(key);
      if (it == value->end()) throw ConfigError::at_key(dim.path, "the config has no value for it");
      value = &*it;
    }
    if (dim.categorical()) {
      const auto& values = dim.domain.values();
      auto it = std::find(values.begin(), values.end(), *value);
      if (it == values.end()) {
        throw ConfigError::at_key(
            dim.path, fmt::format("{} is not one of {}", value->dump(), dim.domain.describe()));
      }
      x.push_back(static_cast<double>(it - values.begin()));
      continue;
    }
    if (!value->is_number()) {
      throw ConfigError::at_key(
          dim.path, fmt::format("{} needs a number, got {}", dim.domain.describe(), value->dump()));
    }
    double v = value->get<double>();
    if (dim.domain.is_log() && !(v > 0)) {
      throw ConfigError::at_key(
          dim.path, fmt::format("{} needs a positive number, got {}", dim.domain.describe(), v));
    }
    const double t = forward(dim.domain, v);
    x.push_back(std::clamp((t - dim.low) / (dim.high - dim.low), 0.0, 1.0));
  }
  return x;
}

Json SpaceEncoding::decode(const std::vector<double>& x) const {
  size_t i = 0;
  return space_.fill([&](const Domain&) -> Json {
    const Dimension& dim = dims_[i];
    const double u = x[i++];
    if (dim.categorical()) {
      const auto n = static_cast<double>(dim.num_choices());
      const auto index = static_cast<size_t>(std::clamp(std::round(u), 0.0, n - 1));
      return dim.domain.values()[index];
    }
    const double t = dim.low + std::clamp(u, 0.0, 1.0) * (dim.high - dim.low);
    return dim.domain.snap(backward(dim.domain, t));
  });
}

std::vector<double> SpaceEncoding::snap(std::vector<double> x) const {
  for (size_t i = 0; i < dims_.size(); ++i) {
    const Dimension& dim = dims_[i];
    if (dim.categorical()) {
      const auto n = static_cast<double>(dim.num_choices());
      x[i] = std::clamp(std::round(x[i]), 0.0, n - 1);
    } else if (dim.domain.is_integer() || dim.domain.q() > 0) {
      const double t = dim.low + std::clamp(x[i], 0.0, 1.0) * (dim.high - dim.low);
      const double v = dim.domain.snap(backward(dim.domain, t)).get<double>();
      x[i] = std::clamp((forward(dim.domain, v) - dim.low) / (dim.high - dim.low), 0.0, 1.0);
    }
  }
  return x;
}

Json SpaceEncoding::sample(Rng& rng) const {
  return space_.fill([&](const Domain& domain) -> Json {
    if (!domain.is_grid()) return domain.sample(rng);
    const auto n = domain.values().size();
    return domain
        .values()[std::min(static_cast<size_t>(unit(rng) * static_cast<double>(n)), n - 1)];
  });
}

namespace {

// std::seed_seq's generate() as the standard specifies it ([rand.util.seedseq]),
// so the engine's state is bit for bit what std::seed_seq gives; libstdc++'s
// takes several integer divisions per word, which for the 624 words of an
// mt19937_64 cost more than a TPE suggestion's kernel sums.
class SeedSequence {
 public:
  using result_type = uint32_t;
  explicit SeedSequence(std::array<uint32_t, 4> v) : v_(v) {}

  template <typename It>
  void generate(It begin, It end) const {
    const size_t n = static_cast<size_t>(end - begin);
    if (n == 0) return;
    std::fill(begin, end, 0x8b8b8b8bu);
    const size_t s = v_.size();
    const size_t t = n >= 623 ? 11 : n >= 68 ? 7 : n >= 39 ? 5 : n >= 7 ? 3 : (n - 1) / 2;
    const size_t p = (n - t) / 2;
    const size_t q = p + t;
    const size_t m = std::max(s + 1, n);
    auto mix = [](uint32_t x) { return x ^ (x >> 27); };
    // Indices k mod n, (k + p) mod n, (k + q) mod n and (k - 1) mod n, stepped.
    size_t i0 = 0, ip = p % n, iq = q % n, im = n - 1;
    auto step = [&] {
      i0 = i0 + 1 == n ? 0 : i0 + 1;
      ip = ip + 1 == n ? 0 : ip + 1;
      iq = iq + 1 == n ? 0 : iq + 1;
      im = im + 1 == n ? 0 : im + 1;
    };
    for (size_t k = 0; k < m; ++k, step()) {
      const uint32_t r1 = 1664525u * mix(begin[i0] ^ begin[ip] ^ begin[im]);
      uint32_t r2 = r1 + static_cast<uint32_t>(i0);
      if (k == 0) {
        r2 = r1 + static_cast<uint32_t>(s);
      } else if (k <= s) {
        r2 += v_[k - 1];
      }
      begin[ip] += r1;
      begin[iq] += r2;
      begin[i0] = r2;
    }
    for (size_t k = m; k < m + n; ++k, step()) {
      const uint32_t r3 = 1566083941u * mix(begin[i0] + begin[ip] + begin[im]);
      const uint32_t r4 = r3 - static_cast<uint32_t>(i0);
      begin[ip] ^= r3;
      begin[iq] ^= r4;
      begin[i0] = r4;
    }
  }

 private:
  std::array<uint32_t, 4> v_;
};

}  // namespace

Rng suggestion_rng(uint64_t seed, uint64_t index) {
  auto lo32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  auto hi32 = [](uint64_t v) { return static_cast<uint32_t>(v >> 32); };
  SeedSequence seq({lo32(seed), hi32(seed), lo32(index), hi32(index)});
  return Rng(seq);
}

void deep_merge(Json& config, const Json& point) {
  for (const auto& [key, value] : point.items()) {
    auto it = config.find(key);
    if (it != config.end() && it->is_object() && value.is_object()) {
      deep_merge(*it, value);
    } else {
      config[key] = value;
    }
  }
}

}  // namespace tune::search::detail
