// make_scheduler: a scheduler from its name and its options table, every
// option checked (type, range, known key). Option names and defaults are
// Ray Tune's; see each scheduler's options struct.
#include "schedulers/factory.h"

#include <fmt/format.h>

#include "schedulers/internal/asha.h"
#include "schedulers/internal/fifo.h"
#include "schedulers/internal/hyperband.h"
#include "schedulers/internal/median_stopping.h"
#include "schedulers/internal/mo_asha.h"
#include "schedulers/internal/options.h"
#include "schedulers/internal/pb2.h"
#include "schedulers/internal/pbt.h"

namespace tune::schedulers {
namespace {

using detail::OptionReader;

// metric, mode and time_attr: every scheduler but FIFO takes them.
template <class Options>
void read_common(OptionReader& r, Options& o) {
  r.read("time_attr", o.time_attr);
  r.read("metric", o.metric);
  r.read("mode", o.mode);
}

std::unique_ptr<TrialScheduler> make_mo_asha(const Json& options) {
  OptionReader r("mo_asha", options);
  MoAshaOptions o;
  r.read("time_attr", o.time_attr);
  r.read("max_t", o.max_t);
  r.read("grace_period", o.grace_period);
  r.read("reduction_factor", o.reduction_factor);
  r.finish();
  return std::make_unique<MoAshaScheduler>(std::move(o));
}

std::unique_ptr<TrialScheduler> make_median(const Json& options) {
  OptionReader r("median_stopping_rule", options);
  MedianStoppingOptions o;
  read_common(r, o);
  r.read("grace_period", o.grace_period);
  r.read("min_samples_required", o.min_samples_required);
  r.read("min_time_slice", o.min_time_slice);
  r.read("hard_stop", o.hard_stop);
  r.finish();
  return std::make_unique<MedianStoppingRule>(std::move(o));
}

std::unique_ptr<TrialScheduler> make_pbt(const Json& options,
                                         std::function<Json(Json)> custom_explore_fn = {}) {
  OptionReader r("pbt", options);
  PbtOptions o;
  o.custom_explore_fn = std::move(custom_explore_fn);
  read_common(r, o);
  r.read("perturbation_interval", o.perturbation_interval);
  r.read("burn_in_period", o.burn_in_period);
  if (const Json* m = r.raw("hyperparam_mutations")) o.hyperparam_mutations = *m;
  r.read("quantile_fraction", o.quantile_fraction);
  r.read("resample_probability", o.resample_probability);
  if (const Json* f = r.raw("perturbation_factors")) {
    r.check(f->is_array() && !f->empty(), "perturbation_factors",
            "perturbation_factors must be a list of numbers, e.g. [1.2, 0.8]");
    o.perturbation_factors.clear();
    for (const Json& v : *f) {
      r.check(v.is_number(), "perturbation_factors",
              fmt::format("perturbation_factors must be numbers, got {}", v.dump()));
      o.perturbation_factors.push_back(v.get<double>());
    }
  }
  r.read("synch", o.synch);
  r.read("seed", o.seed);
  r.finish();
  return std::make_unique<PbtScheduler>(std::move(o));
}

std::unique_ptr<TrialScheduler> make_pb2(const Json& options) {
  OptionReader r("pb2", options);
  Pb2Options o;
  read_common(r, o);
  r.read("perturbation_interval", o.perturbation_interval);
  r.read("burn_in_period", o.burn_in_period);
  if (const Json* b = r.raw("hyperparam_bounds")) o.hyperparam_bounds = *b;
  r.read("quantile_fraction", o.quantile_fraction);
  r.read("synch", o.synch);
  r.read("seed", o.seed);
  r.finish();
  return std::make_unique<Pb2Scheduler>(std::move(o));
}

}  // namespace

namespace detail {

AshaOptions read_asha_options(const Json& options) {
  OptionReader r("asha", options);
  AshaOptions o;
  read_common(r, o);
  r.read("max_t", o.max_t);
  r.read("grace_period", o.grace_period);
  r.read("reduction_factor", o.reduction_factor);
  r.read("brackets", o.brackets);
  r.read("stop_last_trials", o.stop_last_trials);
  r.read("promotion", o.promotion);
  r.read("seed", o.seed);
  r.finish();
  return o;
}

HyperBandOptions read_hyperband_options(const Json& options) {
  OptionReader r("hyperband", options);
  HyperBandOptions o;
  read_common(r, o);
  r.read("max_t", o.max_t);
  r.read("reduction_factor", o.reduction_factor);
  r.read("stop_last_trials", o.stop_last_trials);
  r.read("for_bohb", o.for_bohb);
  r.read("asynchronous", o.asynchronous);
  r.read("seed", o.seed);
  r.finish();
  return o;
}

}  // namespace detail

std::unique_ptr<TrialScheduler> make_scheduler(const std::string& type, const Json& options) {
  if (type == "fifo") {
    OptionReader("fifo", options).finish();
    return std::make_unique<FifoScheduler>();
  }
  if (type == "asha" || type == "async_hyperband") {
    return std::make_unique<AshaScheduler>(detail::read_asha_options(options));
  }
  if (type == "mo_asha") return make_mo_asha(options);
  if (type == "hyperband") return make_hyperband_scheduler(detail::read_hyperband_options(options));
  if (type == "median" || type == "median_stopping_rule") return make_median(options);
  if (type == "pbt") return make_pbt(options);
  if (type == "pb2") return make_pb2(options);
  throw ConfigError::at_key(
      "type", fmt::format("unknown scheduler '{}'; known: fifo, asha (async_hyperband), "
                          "mo_asha, hyperband, median (median_stopping_rule), pbt, pb2",
                          type));
}

std::unique_ptr<TrialScheduler> make_pbt_scheduler(const Json& options,
                                                   std::function<Json(Json)> custom_explore_fn) {
  return make_pbt(options, std::move(custom_explore_fn));
}

std::shared_ptr<TrialScheduler> fifo() { return std::make_shared<FifoScheduler>(); }
std::shared_ptr<TrialScheduler> asha(AshaOptions options) {
  return std::make_shared<AshaScheduler>(std::move(options));
}
std::shared_ptr<TrialScheduler> hyperband(HyperBandOptions options) {
  return make_hyperband_scheduler(std::move(options));
}
std::shared_ptr<TrialScheduler> mo_asha(MoAshaOptions options) {
  return std::make_shared<MoAshaScheduler>(std::move(options));
}
std::shared_ptr<TrialScheduler> median_stopping(MedianStoppingOptions options) {
  return std::make_shared<MedianStoppingRule>(std::move(options));
}
std::shared_ptr<TrialScheduler> pbt(PbtOptions options) {
  return std::make_shared<PbtScheduler>(std::move(options));
}
std::shared_ptr<TrialScheduler> pb2(Pb2Options options) {
  return std::make_shared<Pb2Scheduler>(std::move(options));
}

}  // namespace tune::schedulers
