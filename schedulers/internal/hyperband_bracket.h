// HyperBandScheduler's brackets: their trials, milestones and successive
// halving, as Ray's _Bracket (hyperband.h says the rules); internal to
// hyperband.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedulers/internal/hyperband.h"
#include "schedulers/internal/stats.h"

namespace tune::schedulers {

// Ray's _Bracket. Times are time_attr values; scores carry the sign.
class HyperBandScheduler::Bracket {
 public:
  struct Live {
    std::string id;
    bool has_result = false;
    double time = 0;                                          // 0 before the first result
    double score = -std::numeric_limits<double>::infinity();  // worst when the metric is absent
  };

  Bracket(size_t band, int64_t s, int64_t n0, int64_t r0, double max_t, double eta,
          bool stop_last_trials)
      : band_(band),
        s_(s),
        n_(n0),
        n0_(n0),
        r_(static_cast<double>(r0)),
        r0_(r0),
        cumul_r_(static_cast<double>(r0)),
        halves_(s),
        max_t_(max_t),
        eta_(eta),
        stop_last_trials_(stop_last_trials) {
    total_work_ = total_work(n0, static_cast<double>(r0), s);
  }

  void add_trial(const std::string& id) {
    live_.push_back({id});
    all_.push_back(id);
  }
  bool ever_filled() const { return static_cast<int64_t>(all_.size()) >= n0_; }
  bool has(const std::string& id) const { return find(id) != nullptr; }

  bool cur_iter_done() const {
    return std::all_of(live_.begin(), live_.end(),
                       [&](const Live& l) { return l.time >= cumul_r_; });
  }
  bool finished() const { return stop_last_trials_ && halves_ == 0 && cur_iter_done(); }

  bool continue_trial(const std::string& id) const {
    if (!stop_last_trials_ && halves_ == 0) return true;
    return find(id)->time < cumul_r_;
  }
  // The last training_iteration for which continue_trial holds whatever
  // the results: the one before the milestone. Milestones only grow.
  int64_t continues_through() const {
    if (!stop_last_trials_ && halves_ == 0) return std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(std::ceil(cumul_r_)) - 1;
  }

  // Ray's update_trial_stats.
  void update(const std::string& id, double time, std::optional<double> score) {
    Live* l = find(id);
    completed_progress_ += time - l->time;
    l->has_result = true;
    l->time = time;
    l->score = score.value_or(-std::numeric_limits<double>::infinity());
    to_unpause_.erase(id);
  }

  void cleanup(const std::string& id) {
    std::erase_if(live_, [&](const Live& l) { return l.id == id; });
    to_unpause_.erase(id);
  }

  // Ray's successive_halving: (good, bad), each in ascending score order.
  // `rank` (when given) gets each trial's place, 1: the best, and score.
  std::pair<std::vector<std::string>, std::vector<std::string>> successive_halving(
      std::map<std::string, std::pair<size_t, double>>* rank = nullptr) {
    std::vector<std::string> good, bad;
    if (halves_ == 0 && !stop_last_trials_) {
      for (const Live& l : live_) good.push_back(l.id);
      return {good, bad};
    }
    --halves_;
    n_ = static_cast<int64_t>(std::ceil(static_cast<double>(n_) / eta_));
    r_ = std::trunc(std::min(r_ * eta_, max_t_));
    cumul_r_ = r_;
    auto sorted = live_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Live& a, const Live& b) { return a.score < b.score; });
    const size_t keep = std::min<size_t>(static_cast<size_t>(n_), sorted.size());
    for (size_t i = 0; i < sorted.size(); ++i) {
      (i < sorted.size() - keep ? bad : good).push_back(sorted[i].id);
      if (rank) (*rank)[sorted[i].id] = {sorted.size() - i, sorted[i].score};
    }
    return {good, bad};
  }

  double completion_percentage() const {
    if (finished()) return 1.0;
    if (total_work_ <= 0) return 0.0;
    return std::min(completed_progress_ / total_work_, 1.0);
  }

  std::vector<std::string> live_ids() const {
    std::vector<std::string> ids;
    for (const Live& l : live_) ids.push_back(l.id);
    return ids;
  }

  Json save() const {
    Json live = Json::array();
    for (const Live& l : live_)
      live.push_back({l.id, l.has_result, l.time, detail::to_json(l.score)});
    return {{"band", band_},
            {"s", s_},
            {"n", n_},
            {"n0", n0_},
            {"r", r_},
            {"r0", r0_},
            {"cumul_r", cumul_r_},
            {"halves", halves_},
            {"live", live},
            {"all", all_},
            {"total_work", total_work_},
            {"completed_progress", completed_progress_},
            {"to_unpause", to_unpause_}};
  }

  static Bracket restore(const Json& j, double max_t, double eta, bool stop_last_trials) {
    Bracket b(j.at("band").get<size_t>(), j.at("s").get<int64_t>(), j.at("n0").get<int64_t>(),
              j.at("r0").get<int64_t>(), max_t, eta, stop_last_trials);
    b.n_ = j.at("n").get<int64_t>();
    b.r_ = j.at("r").get<double>();
    b.cumul_r_ = j.at("cumul_r").get<double>();
    b.halves_ = j.at("halves").get<int64_t>();
    for (const Json& l : j.at("live")) {
      b.live_.push_back({l.at(0).get<std::string>(), l.at(1).get<bool>(), l.at(2).get<double>(),
                         detail::double_from_json(l.at(3))});
    }
    b.all_ = j.at("all").get<std::vector<std::string>>();
    b.total_work_ = j.at("total_work").get<double>();
    b.completed_progress_ = j.at("completed_progress").get<double>();
    b.to_unpause_ = j.at("to_unpause").get<std::set<std::string>>();
    return b;
  }

  size_t band_;
  int64_t s_;
  int64_t n_, n0_;
  double r_;
  int64_t r0_;
  double cumul_r_;
  int64_t halves_;
  std::vector<std::string> all_;
  std::set<std::string> to_unpause_;  // Ray's trials_to_unpause

 private:
  const Live* find(const std::string& id) const {
    for (const Live& l : live_) {
      if (l.id == id) return &l;
    }
    return nullptr;
  }
  Live* find(const std::string& id) {
    return const_cast<Live*>(static_cast<const Bracket*>(this)->find(id));
  }

  // Ray's _calculate_total_work, kept as Ray computes it (it only orders
  // brackets in choose_trial_to_run).
  double total_work(int64_t n, double r, int64_t s) const {
    double work = 0;
    const double cumulative_r = r;
    double nn = static_cast<double>(n);
    for (int64_t i = 0; i <= s; ++i) {
      work += std::trunc(nn) * std::trunc(r);
      nn = std::ceil(nn / eta_);
      r = std::trunc(std::min(r * eta_, max_t_ - cumulative_r));
    }
    return work;
  }

  std::vector<Live> live_;  // in insertion order (Ray's dict order)
  double max_t_;
  double eta_;
  bool stop_last_trials_;
  double total_work_ = 0;
  double completed_progress_ = 0;
};

}  // namespace tune::schedulers
