#include "tune/tune_config.h"

#include "schedulers/internal/asha.h"
#include "schedulers/internal/fifo.h"
#include "schedulers/internal/hyperband.h"
#include "schedulers/internal/median_stopping.h"
#include "schedulers/internal/mo_asha.h"
#include "schedulers/internal/pb2.h"
#include "schedulers/internal/pbt.h"
#include "search/internal/bohb.h"
#include "search/internal/gp.h"
#include "search/internal/motpe.h"
#include "search/internal/nsga2.h"
#include "search/internal/tpe.h"
#include "tune/plugin_kind.h"

namespace tune {

StopCondition::StopCondition(std::map<std::string, double> at_least) {
  if (at_least.empty()) return;
  std::vector<StopCriterion> criteria;
  for (const auto& [key, threshold] : at_least) criteria.push_back({key, threshold});
  stopper_ = std::make_shared<CriteriaStopper>(std::move(criteria));
}

namespace schedulers {

// Each plug-in carries its kind, as a sweep file names it (tune/plugin_kind.h).
std::shared_ptr<TrialScheduler> fifo() {
  return named_plugin<TrialScheduler>(std::make_unique<FifoScheduler>(), "fifo");
}
std::shared_ptr<TrialScheduler> asha(AshaOptions options) {
  return named_plugin<TrialScheduler>(std::make_unique<AshaScheduler>(std::move(options)), "asha");
}
std::shared_ptr<TrialScheduler> hyperband(HyperBandOptions options) {
  return named_plugin<TrialScheduler>(make_hyperband_scheduler(std::move(options)), "hyperband");
}
std::shared_ptr<TrialScheduler> mo_asha(MoAshaOptions options) {
  return named_plugin<TrialScheduler>(std::make_unique<MoAshaScheduler>(std::move(options)),
                                      "mo_asha");
}
std::shared_ptr<TrialScheduler> median_stopping(MedianStoppingOptions options) {
  return named_plugin<TrialScheduler>(std::make_unique<MedianStoppingRule>(std::move(options)),
                                      "median_stopping_rule");
}
std::shared_ptr<TrialScheduler> pbt(PbtOptions options) {
  return named_plugin<TrialScheduler>(std::make_unique<PbtScheduler>(std::move(options)), "pbt");
}
std::shared_ptr<TrialScheduler> pb2(Pb2Options options) {
  return named_plugin<TrialScheduler>(std::make_unique<Pb2Scheduler>(std::move(options)), "pb2");
}

}  // namespace schedulers

namespace search {

std::shared_ptr<Searcher> tpe(TpeOptions options) {
  options.base.num_samples = -1;
  return named_plugin<Searcher>(std::make_unique<TpeSearcher>(std::move(options)), "tpe");
}
std::shared_ptr<Searcher> gp(GpOptions options) {
  options.base.num_samples = -1;
  return named_plugin<Searcher>(std::make_unique<GpSearcher>(std::move(options)), "gp");
}
std::shared_ptr<Searcher> bohb(BohbOptions options) {
  options.base.num_samples = -1;
  return named_plugin<Searcher>(std::make_unique<BohbSearcher>(std::move(options)), "bohb");
}

std::shared_ptr<Searcher> motpe(TpeOptions options) {
  options.base.num_samples = -1;
  return named_plugin<Searcher>(std::make_unique<MotpeSearcher>(std::move(options)), "motpe");
}
std::shared_ptr<Searcher> nsga2(Nsga2Options options) {
  options.base.num_samples = -1;
  return named_plugin<Searcher>(std::make_unique<Nsga2Searcher>(std::move(options)), "nsga2");
}

}  // namespace search
}  // namespace tune
