#include "tune/tune_config.h"

#include "schedulers/internal/asha.h"
#include "schedulers/internal/fifo.h"
#include "schedulers/internal/hyperband.h"
#include "schedulers/internal/median_stopping.h"
#include "schedulers/internal/pb2.h"
#include "schedulers/internal/pbt.h"
#include "search/internal/bohb.h"
#include "search/internal/gp.h"
#include "search/internal/tpe.h"

namespace tune {

StopCondition::StopCondition(std::map<std::string, double> at_least) {
  if (at_least.empty()) return;
  std::vector<StopCriterion> criteria;
  for (const auto& [key, threshold] : at_least) criteria.push_back({key, threshold});
  stopper_ = std::make_shared<CriteriaStopper>(std::move(criteria));
}

namespace schedulers {

std::shared_ptr<TrialScheduler> fifo() { return std::make_shared<FifoScheduler>(); }
std::shared_ptr<TrialScheduler> asha(AshaOptions options) {
  return std::make_shared<AshaScheduler>(std::move(options));
}
std::shared_ptr<TrialScheduler> hyperband(HyperBandOptions options) {
  return make_hyperband_scheduler(std::move(options));
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

}  // namespace schedulers

namespace search {

std::shared_ptr<Searcher> tpe(TpeOptions options) {
  options.base.num_samples = -1;
  return std::make_shared<TpeSearcher>(std::move(options));
}
std::shared_ptr<Searcher> gp(GpOptions options) {
  options.base.num_samples = -1;
  return std::make_shared<GpSearcher>(std::move(options));
}
std::shared_ptr<Searcher> bohb(BohbOptions options) {
  options.base.num_samples = -1;
  return std::make_shared<BohbSearcher>(std::move(options));
}

}  // namespace search
}  // namespace tune
