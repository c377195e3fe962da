#include "core/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tune::core {
namespace {

// Constrained domination (see the header); plain domination without
// violations.
bool beats(const std::vector<Point>& points, const std::vector<double>& violation, size_t i,
           size_t j) {
  if (!violation.empty()) {
    const double vi = violation[i], vj = violation[j];
    if (vi > 0 || vj > 0) return vi < vj;
  }
  return dominates(points[i], points[j]);
}

// Hypervolume of points already strictly below `reference`, in the first
// `dims` objectives.
double volume(std::vector<const Point*> points, const Point& reference, size_t dims) {
  if (points.empty()) return 0;
  if (dims == 1) {
    double best = reference[0];
    for (const Point* p : points) best = std::min(best, (*p)[0]);
    return reference[0] - best;
  }
  const size_t last = dims - 1;
  std::sort(points.begin(), points.end(),
            [last](const Point* a, const Point* b) { return (*a)[last] < (*b)[last]; });
  if (dims == 2) {
    // Sweep along the second objective: each point adds the strip its first
    // objective improves on those before it.
    double hv = 0;
    double best_x = reference[0];
    for (size_t i = 0; i < points.size(); ++i) {
      best_x = std::min(best_x, (*points[i])[0]);
      const double next_y = i + 1 < points.size() ? (*points[i + 1])[1] : reference[1];
      hv += (reference[0] - best_x) * (next_y - (*points[i])[1]);
    }
    return hv;
  }
  // Slices along the last objective: between consecutive values, the points
  // at or below the slice span a (dims - 1)-dimensional volume.
  double hv = 0;
  std::vector<const Point*> below;
  for (size_t i = 0; i < points.size(); ++i) {
    below.push_back(points[i]);
    const double next = i + 1 < points.size() ? (*points[i + 1])[last] : reference[last];
    const double height = next - (*points[i])[last];
    if (height > 0) hv += height * volume(below, reference, last);
  }
  return hv;
}

}  // namespace

double constraint_violation(const Json& result) {
  const auto it = result.find(kConstraintsKey);
  if (it == result.end()) return 0;
  double violation = 0;
  auto add = [&violation](const Json& c) {
    const double v = c.is_number() ? c.get<double>() : NAN;
    violation += std::isnan(v) ? INFINITY : std::max(v, 0.0);
  };
  if (it->is_array()) {
    for (const Json& c : *it) add(c);
  } else {
    add(*it);
  }
  return violation;
}

bool dominates(const Point& a, const Point& b) {
  bool better = false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) better = true;
  }
  return better;
}

std::vector<int> nondominated_ranks(const std::vector<Point>& points,
                                    const std::vector<double>& violation) {
  const size_t n = points.size();
  std::vector<int> rank(n, 0);
  std::vector<size_t> beaten_by(n, 0);          // how many points beat each
  std::vector<std::vector<size_t>> victims(n);  // whom each beats
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (beats(points, violation, i, j)) {
        victims[i].push_back(j);
        ++beaten_by[j];
      } else if (beats(points, violation, j, i)) {
        victims[j].push_back(i);
        ++beaten_by[i];
      }
    }
  }
  std::vector<size_t> front;
  for (size_t i = 0; i < n; ++i) {
    if (beaten_by[i] == 0) front.push_back(i);
  }
  for (int r = 0; !front.empty(); ++r) {
    std::vector<size_t> next;
    for (size_t i : front) {
      rank[i] = r;
      for (size_t j : victims[i]) {
        if (--beaten_by[j] == 0) next.push_back(j);
      }
    }
    front = std::move(next);
  }
  return rank;
}

std::vector<std::vector<size_t>> nondominated_fronts(const std::vector<Point>& points,
                                                     const std::vector<double>& violation) {
  const std::vector<int> rank = nondominated_ranks(points, violation);
  std::vector<std::vector<size_t>> fronts;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto r = static_cast<size_t>(rank[i]);
    if (r >= fronts.size()) fronts.resize(r + 1);
    fronts[r].push_back(i);
  }
  return fronts;
}

std::vector<double> crowding_distances(const std::vector<Point>& points,
                                       const std::vector<size_t>& members) {
  const size_t m = members.size();
  std::vector<double> distance(m, 0);
  if (m == 0) return distance;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<size_t> order(m);
  for (size_t k = 0; k < points[members[0]].size(); ++k) {
    for (size_t i = 0; i < m; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return points[members[a]][k] < points[members[b]][k];
    });
    const double low = points[members[order.front()]][k];
    const double range = points[members[order.back()]][k] - low;
    distance[order.front()] = kInf;
    distance[order.back()] = kInf;
    if (!(range > 0)) continue;
    for (size_t i = 1; i + 1 < m; ++i) {
      distance[order[i]] +=
          (points[members[order[i + 1]]][k] - points[members[order[i - 1]]][k]) / range;
    }
  }
  return distance;
}

std::vector<size_t> elite_order(const std::vector<Point>& points,
                                const std::vector<double>& violation) {
  std::vector<size_t> order;
  for (const auto& members : nondominated_fronts(points, violation)) {
    const auto crowding = crowding_distances(points, members);
    std::vector<size_t> by_crowding(members.size());
    for (size_t j = 0; j < members.size(); ++j) by_crowding[j] = j;
    std::stable_sort(by_crowding.begin(), by_crowding.end(),
                     [&](size_t a, size_t b) { return crowding[a] > crowding[b]; });
    for (size_t j : by_crowding) order.push_back(members[j]);
  }
  return order;
}

double hypervolume(std::vector<Point> points, const Point& reference) {
  std::vector<const Point*> inside;
  for (const Point& p : points) {
    bool below = p.size() == reference.size();
    for (size_t k = 0; below && k < p.size(); ++k) below = p[k] < reference[k];
    if (below) inside.push_back(&p);
  }
  return volume(std::move(inside), reference, reference.size());
}

std::vector<double> hypervolume_contributions(const std::vector<Point>& points,
                                              const Point& reference) {
  const double total = hypervolume(points, reference);
  std::vector<double> out(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<Point> rest;
    for (size_t j = 0; j < points.size(); ++j) {
      if (j != i) rest.push_back(points[j]);
    }
    out[i] = std::max(0.0, total - hypervolume(std::move(rest), reference));
  }
  return out;
}

Point reference_beyond(const std::vector<Point>& points) {
  Point reference = points.empty() ? Point() : points[0];
  for (const Point& p : points) {
    for (size_t k = 0; k < reference.size(); ++k) reference[k] = std::max(reference[k], p[k]);
  }
  for (double& r : reference) r += std::max(0.1 * std::abs(r), 1e-12);
  return reference;
}

std::vector<size_t> hypervolume_subset(const std::vector<Point>& points,
                                       const std::vector<size_t>& members, size_t k,
                                       const Point& reference) {
  if (k >= members.size()) return members;
  std::vector<size_t> picked;
  std::vector<Point> chosen;
  std::vector<char> taken(members.size(), 0);
  double base = 0;
  while (picked.size() < k) {
    size_t best = members.size();
    double best_gain = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      if (taken[i]) continue;
      chosen.push_back(points[members[i]]);
      const double gain = hypervolume(chosen, reference) - base;
      chosen.pop_back();
      if (gain > best_gain) {
        best_gain = gain;
        best = i;
      }
    }
    taken[best] = 1;
    picked.push_back(members[best]);
    chosen.push_back(points[members[best]]);
    base += best_gain;
  }
  return picked;
}

}  // namespace tune::core
