// The dashboard's one page, in its two forms: live (scripts loaded from
// /static/, data fetched from /api/) and static (scripts, styles and every
// answer inlined, for `tunerun report`). The assets under dashboard/web/ and
// Chart.js (Debian's libjs-chart.js) are embedded at build time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config.h"

namespace tune::dashboard {

struct Asset {
  std::string_view text;
  const char* content_type;
};

// The embedded file served as /static/NAME (app.js, style.css, chart.js...).
std::optional<Asset> static_asset(const std::string& name);

std::string live_page();

// `answers` pairs API paths ("exp/NAME/trials", ...) with their JSON text;
// the page reads them instead of fetching, so the file opens from disk.
std::string static_page(const std::vector<std::pair<std::string, std::string>>& answers,
                        const std::string& title);

}  // namespace tune::dashboard
