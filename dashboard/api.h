// Api: the dashboard's JSON answers, shared by the HTTP server and the
// static report (which stores the answers the page would ask for).
//
// Experiments are the folders under `root` that hold an experiment.db, or
// `root` itself when it holds one. Paths (after /api/):
//   experiments                      every experiment: state, counts, best, times
//   version                          one string that changes when any experiment does
//   exp/NAME/version                 the experiment's fingerprint (cheap: poll it)
//   exp/NAME/summary                 ExperimentDb::summary
//   exp/NAME/trials                  ExperimentDb::trials: every trial (for scripts)
//   exp/NAME/trials?offset=O&limit=L ExperimentDb::trial_page: L trials from the O-th, L at
//                                    most (and by default) limits.max_page_trials; the page
//                                    asks for these, so a 100,000-trial table pages
//                                    sort=K&desc=1&filter=T: ordered by K (index, trial_id,
//                                    status, iteration, reason, metric.NAME, config.KEY),
//                                    only the rows holding T (ExperimentDb::trial_page)
//   exp/NAME/sample                  ExperimentDb::trial_sample: the trials the charts draw
//   exp/NAME/sample?since=F&stride=S what changed in them since the answer with fingerprint F
//                                    (ExperimentDb::trial_sample_since): a live page asks this
//   exp/NAME/curves?metric=M&mode=D  ExperimentDb::curves (D: min or max, for a metric that is
//                                    no objective)
//   exp/NAME/scheduler               ExperimentDb::scheduler
//   exp/NAME/front                   ExperimentDb::front (several objectives)
//   exp/NAME/importance?metric=M     importance() of M (default: the experiment's metric)
//   exp/NAME/trial/ID                ExperimentDb::trial
//
// Answers are cached as JSON text keyed by the experiment's fingerprint, so
// polling pages cost a few indexed lookups until something changes. The
// cache is bounded in entries and bytes (least recently used out first), an
// answer is keyed only on the query parameters it reads (so junk in a query
// string makes no new entry), and an experiment's entries go once its
// fingerprint changes. Thread-safe: the server calls get_text() from several
// threads.
#pragma once

#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "dashboard/experiment_db.h"
#include "dashboard/importance.h"

namespace tune::dashboard {

struct ApiOptions {
  std::filesystem::path root;             // the folder given to `tunerun dashboard`
  QueryLimits limits;                     // what one answer may hold
  ImportanceOptions importance;           // the random forest behind exp/NAME/importance
  size_t cache_entries = 256;             // answers kept; a page asks for ~6 per experiment
  size_t cache_bytes = size_t{64} << 20;  // their text in all; one over an eighth is not kept
};

using Query = std::map<std::string, std::string>;

class Api {
 public:
  explicit Api(ApiOptions options) : options_(std::move(options)) {}

  // Answers `path` (see above), computed afresh. Throws NotFound for an
  // unknown path, experiment or trial, StorageError for a database that
  // cannot be read.
  Json get(const std::string& path, const Query& query = {});
  // The same answer as JSON text, from the cache while the experiment's
  // fingerprint is unchanged: a 10,000-trial table is megabytes, serialised
  // once per change rather than once per request.
  std::shared_ptr<const std::string> get_text(const std::string& path, const Query& query = {});

  // The experiments under root by name, sorted. Re-read on every call: a new
  // sweep appears without restarting the server.
  std::vector<std::string> experiment_names() const;

  struct CacheStats {
    size_t entries = 0;
    size_t bytes = 0;
  };
  CacheStats cache_stats() const;

 private:
  struct Entry {
    std::string key;          // "NAME/what?query"
    std::string experiment;   // NAME
    std::string fingerprint;  // of the experiment when it was computed
    std::shared_ptr<const std::string> text;
  };

  std::filesystem::path experiment_dir(const std::string& name) const;  // throws NotFound
  // Splits "exp/NAME/what"; nullopt for another path.
  static std::optional<std::pair<std::string, std::string>> split(const std::string& path);
  Json compute(const std::string& path, const Query& query);
  Json experiment(const ExperimentDb& db, const std::string& name, const std::string& what,
                  const Query& query);
  Json experiments();
  Json summary_of(const ExperimentDb& db, const std::string& name);  // cached by fingerprint
  void remember(Entry entry);                                        // needs mutex_
  static std::string whole_trial_list(const ExperimentDb& db);       // exp/NAME/trials as text

  ApiOptions options_;
  mutable std::mutex mutex_;  // guards what follows
  std::list<Entry> lru_;      // most recently used first
  std::map<std::string, std::list<Entry>::iterator> cache_;
  size_t cache_bytes_ = 0;
  std::map<std::string, std::string> fingerprints_;                // NAME -> the latest seen
  std::map<std::string, std::pair<std::string, Json>> summaries_;  // NAME -> (fingerprint, summary)
};

}  // namespace tune::dashboard
