// The static report: one experiment's dashboard page as a single HTML file
// with Chart.js, the page's scripts and the answers the page asks for
// inlined, so it opens from disk (file://) with no server and no network.
// It holds every trial's summary (the table's columns, in compact rows), the
// trials the live page's charts draw, and the own pages (results) of the best
// of each objective and an even sample, and says what it left out: its size
// and the memory to write it stay bounded (31 MB at 100,000 trials).
#pragma once

#include <filesystem>

#include "dashboard/api.h"

namespace tune::dashboard {

struct ReportOptions {
  QueryLimits limits;              // as the live page: thinned curves and result tables
  ImportanceOptions importance;    // the same forest as the live page
  size_t max_report_trials = 200;  // trials whose own page (results) the report holds: the best
                                   // of each objective and an even sample (~10 kB to 200 kB each)
  size_t max_detail_bytes = size_t{8} << 20;    // those pages in all: no more once spent
  size_t max_summary_bytes = size_t{36} << 20;  // every trial's summary: past it a row keeps
                                                // no reason and only the objectives' values
};

// Writes the report of the experiment in `experiment_dir` to `output`
// (replaced). Returns the number of trials it holds. Throws StorageError when
// the database cannot be read and tune::Error when `output` cannot be written.
size_t write_report(const std::filesystem::path& experiment_dir,
                    const std::filesystem::path& output, const ReportOptions& options = {});

}  // namespace tune::dashboard
