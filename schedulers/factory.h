// Schedulers made by name and options table (as in a sweep file's
// [scheduler] table: make_scheduler) or by typed options (asha(), pbt()...:
// what TuneConfig::scheduler takes in C++), so the CLI and the C++ API share
// one path to the same classes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/config.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

// Creates a scheduler from a name ("fifo") and its options table. Throws
// tune::ConfigError whose key() names the offending option or "type".
std::unique_ptr<TrialScheduler> make_scheduler(const std::string& type, const Json& options);

// make_scheduler("pbt", options) with Ray's custom_explore_fn: applied to
// each explored config after hyperparam_mutations (which it may replace).
std::unique_ptr<TrialScheduler> make_pbt_scheduler(const Json& options,
                                                   std::function<Json(Json)> custom_explore_fn);

// Plug-in factories for TuneConfig::scheduler. Each throws ConfigError for
// invalid options, as the scheduler's constructor does.
std::shared_ptr<TrialScheduler> fifo();
std::shared_ptr<TrialScheduler> asha(AshaOptions options = {});
// With options.asynchronous, an ASHA over HyperBand's brackets
// (schedulers/internal/hyperband.h).
std::shared_ptr<TrialScheduler> hyperband(HyperBandOptions options = {});
// Several objectives (TuneConfig::metric a list): ASHA by non-dominated sorting.
std::shared_ptr<TrialScheduler> mo_asha(MoAshaOptions options = {});
std::shared_ptr<TrialScheduler> median_stopping(MedianStoppingOptions options = {});
std::shared_ptr<TrialScheduler> pbt(PbtOptions options);
std::shared_ptr<TrialScheduler> pb2(Pb2Options options);

}  // namespace tune::schedulers
