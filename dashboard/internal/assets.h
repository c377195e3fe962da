// The files under dashboard/web/ and Debian's Chart.js, embedded by
// cmake/embed_text.cmake into a generated source at build time.
#pragma once

#include <string_view>

namespace tune::dashboard::assets {

extern const std::string_view index_html;
extern const std::string_view style_css;
extern const std::string_view util_js;
extern const std::string_view charts_js;
extern const std::string_view contour_js;
extern const std::string_view scheduler_js;
extern const std::string_view trial_js;
extern const std::string_view compare_js;
extern const std::string_view front_js;
extern const std::string_view views_js;
extern const std::string_view app_js;
extern const std::string_view chart_js;  // Chart.js 3.9 (libjs-chart.js), MIT

}  // namespace tune::dashboard::assets
