#include "search/internal/gp_candidates.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/internal/gp_inputs.h"

namespace tune::search::detail {
namespace {

// Candidates. A quarter of them perturb the best trials and, from
// trust_region_dims dimensions on, another quarter lie in the trust region;
// the rest are uniform.
constexpr Eigen::Index kShareDivisor = 4;  // each of those shares is n_candidates / 4
constexpr size_t kLocalAnchors = 5;        // the best trials perturbed, in turn
constexpr double kLocalSd = 0.1;           // their perturbation, on the unit scale
// Every other local row lies around the best trial alone, at these sds in
// turn: the acquisition's peak near the best trial is often narrower than
// kLocalSd (a rugged function's basin, a valley's floor), and the climb
// (gp_acquisition.h) starts only from the best few candidates. Measured by
// search_quality --rugged, seeds 0..29, with the climb's finer steps:
// griewank6's median best after 50 trials 0.942 -> 0.915, schwefel2's
// after 100 trials 0.013 -> 0.002.
constexpr double kFineSds[] = {0.03, 0.01, 0.003, 0.001, 0.0003};
// The trust region's sds: these scales times the region's side per dim
// (the fitted lengthscale over their geometric mean), at most kMaxTrustSd.
constexpr double kTrustScales[] = {0.2, 0.05, 0.01};
constexpr double kMaxTrustSd = 0.5;
// A perturbed candidate keeps its anchor's value of a categorical with this
// probability, else draws one uniformly.
constexpr double kKeepChoice = 0.8;
// The best kRefined candidates (and the best uniform one) are refined.
constexpr int kRefined = 3;

}  // namespace

double reflect_into_unit(double v) {
  // Folding the line onto [0, 1] keeps a perturbation's density smooth at
  // the bounds; clamping would put all the mass beyond one on the bound
  // itself, so an anchor near a face would propose the face again and again.
  v = std::fmod(std::abs(v), 2.0);
  return v <= 1 ? v : 2 - v;
}

CandidatePlan plan_candidates(int64_t n_candidates, bool trust_region) {
  CandidatePlan plan{.total = static_cast<Eigen::Index>(n_candidates)};
  plan.local = plan.total / kShareDivisor;
  if (trust_region) plan.trust = plan.total / kShareDivisor;
  return plan;
}

std::vector<double> trust_box(const std::vector<Dimension>& dims, const Eigen::VectorXd& theta) {
  std::vector<double> box(dims.size(), kLocalSd);
  double log_sum = 0;
  int numeric = 0;
  for (size_t d = 0, at = 0; d < dims.size(); ++d) {
    if (dims[d].categorical()) {
      at += dims[d].num_choices();
      continue;
    }
    box[d] = theta[static_cast<Eigen::Index>(at++)];
    log_sum += box[d];
    ++numeric;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!dims[d].categorical()) box[d] = std::exp(box[d] - log_sum / std::max(1, numeric));
  }
  return box;
}

std::vector<double> local_box(const std::vector<Dimension>& dims) {
  return std::vector<double>(dims.size(), kLocalSd);
}

Eigen::MatrixXd draw_candidates(const SpaceEncoding& encoding,
                                const std::vector<ModelBasedSearcher::Observation>& obs,
                                const std::vector<Eigen::Index>& by_value,
                                const CandidatePlan& plan, const std::vector<double>& box,
                                Rng& rng) {
  const auto& dims = encoding.dims();
  Eigen::MatrixXd C(plan.total, gp_dims(dims));
  for (Eigen::Index c = 0; c < plan.total; ++c) {
    std::vector<double> x(dims.size());
    const bool in_trust = c < plan.trust;
    const bool near = !in_trust && c < plan.trust + plan.local;
    const bool fine = near && c % 2 == 1;
    const size_t anchor_rank =
        in_trust || fine ? 0 : static_cast<size_t>(c) % std::min<size_t>(kLocalAnchors, obs.size());
    const auto& anchor = obs[by_value[anchor_rank]].x;
    const double scale = in_trust ? kTrustScales[c % std::size(kTrustScales)]
                         : fine   ? kFineSds[(c / 2) % std::size(kFineSds)]
                                  : kLocalSd;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].categorical()) {
        const auto k = dims[d].num_choices();
        x[d] = (near || in_trust) && unit(rng) < kKeepChoice
                   ? anchor[d]
                   : static_cast<double>(std::min<size_t>(unit(rng) * k, k - 1));
      } else if (near || in_trust) {
        const double sd = in_trust ? std::min(kMaxTrustSd, scale * box[d]) : scale;
        x[d] = reflect_into_unit(anchor[d] + sd * normal_draw(rng));
      } else {
        x[d] = unit(rng);
      }
    }
    C.row(c) = to_gp(dims, encoding.snap(std::move(x))).transpose();
  }
  return C;
}

std::vector<Eigen::Index> refinement_starts(const Eigen::VectorXd& score,
                                            const CandidatePlan& plan) {
  const Eigen::Index m = plan.total;
  std::vector<Eigen::Index> top(m);
  std::iota(top.begin(), top.end(), 0);
  const auto refined = std::min<Eigen::Index>(kRefined, m);
  std::partial_sort(top.begin(), top.begin() + refined, top.end(),
                    [&](auto a, auto b) { return score[a] > score[b]; });
  top.resize(refined);
  const Eigen::Index uniform_from = plan.trust + plan.local;
  if (uniform_from < m) {
    Eigen::Index far;
    score.tail(m - uniform_from).maxCoeff(&far);
    far += uniform_from;
    if (std::find(top.begin(), top.end(), far) == top.end()) top.push_back(far);
  }
  return top;
}

}  // namespace tune::search::detail
