// The static report: one experiment's dashboard page as a single HTML file
// with Chart.js, the page's scripts and every answer the page asks for
// inlined, so it opens from disk (file://) with no server and no network.
#pragma once

#include <filesystem>

#include "dashboard/api.h"

namespace tune::dashboard {

struct ReportOptions {
  QueryLimits limits;            // as the live page: thinned curves and result tables
  ImportanceOptions importance;  // the same forest as the live page
};

// Writes the report of the experiment in `experiment_dir` to `output`
// (replaced). Returns the number of trials it holds. Throws StorageError when
// the database cannot be read and tune::Error when `output` cannot be written.
size_t write_report(const std::filesystem::path& experiment_dir,
                    const std::filesystem::path& output, const ReportOptions& options = {});

}  // namespace tune::dashboard
