// Api: the dashboard's JSON answers, shared by the HTTP server and the
// static report (which stores the answers the page would ask for).
//
// Experiments are the folders under `root` that hold an experiment.db, or
// `root` itself when it holds one. Paths (after /api/):
//   experiments                      every experiment: state, counts, best, times
//   version                          one string that changes when any experiment does
//   exp/NAME/version                 the experiment's fingerprint (cheap: poll it)
//   exp/NAME/summary                 ExperimentDb::summary
//   exp/NAME/trials                  ExperimentDb::trials
//   exp/NAME/curves?metric=M         ExperimentDb::curves
//   exp/NAME/scheduler               ExperimentDb::scheduler
//   exp/NAME/importance              importance() of the experiment's metric
//   exp/NAME/trial/ID                ExperimentDb::trial
//
// Answers are cached per experiment and keyed by its fingerprint, so
// polling pages cost a few indexed lookups until something changes.
// Thread-safe: the server calls get() from several threads.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/config.h"
#include "dashboard/experiment_db.h"
#include "dashboard/importance.h"

namespace tune::dashboard {

struct ApiOptions {
  std::filesystem::path root;    // the folder given to `tunerun dashboard`
  QueryLimits limits;            // what one answer may hold
  ImportanceOptions importance;  // the random forest behind exp/NAME/importance
};

using Query = std::map<std::string, std::string>;

class Api {
 public:
  explicit Api(ApiOptions options) : options_(std::move(options)) {}

  // Answers `path` (see above). Throws NotFound for an unknown path,
  // experiment or trial, StorageError for a database that cannot be read.
  Json get(const std::string& path, const Query& query = {});
  // The same answer as JSON text, cached with it: a 10,000-trial table is
  // megabytes, serialised once per change rather than once per request.
  std::shared_ptr<const std::string> get_text(const std::string& path, const Query& query = {});

  // The experiments under root by name, sorted. Re-read on every call: a new
  // sweep appears without restarting the server.
  std::vector<std::string> experiment_names() const;

 private:
  // One answer, shared by the cache and the requests that read it.
  struct Answer {
    std::string fingerprint;  // of the experiment when it was computed; empty: not cached
    Json json;
    std::once_flag dumped;
    std::shared_ptr<const std::string> text;  // json.dump(), made on the first get_text
  };

  std::filesystem::path experiment_dir(const std::string& name) const;  // throws NotFound
  std::shared_ptr<Answer> answer(const std::string& path, const Query& query);
  std::shared_ptr<Answer> experiment(const std::string& name, const std::string& what,
                                     const Query& query);
  Json experiments();

  ApiOptions options_;
  std::mutex mutex_;                                      // guards cache_
  std::map<std::string, std::shared_ptr<Answer>> cache_;  // "NAME/what?query" -> answer
};

}  // namespace tune::dashboard
