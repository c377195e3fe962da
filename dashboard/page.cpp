#include "dashboard/page.h"

#include <array>

#include "dashboard/internal/assets.h"

namespace tune::dashboard {
namespace {

// Served with these types; the server compresses nothing (loopback gains
// nothing from it).
struct Named {
  const char* name;
  const std::string_view* text;
  const char* content_type;
};

// In the order the page loads them: Chart.js, then the page's own modules.
const std::array<Named, 11> kAssets = {{
    {"chart.js", &assets::chart_js, "application/javascript; charset=utf-8"},
    {"util.js", &assets::util_js, "application/javascript; charset=utf-8"},
    {"charts.js", &assets::charts_js, "application/javascript; charset=utf-8"},
    {"contour.js", &assets::contour_js, "application/javascript; charset=utf-8"},
    {"front.js", &assets::front_js, "application/javascript; charset=utf-8"},
    {"scheduler.js", &assets::scheduler_js, "application/javascript; charset=utf-8"},
    {"trial.js", &assets::trial_js, "application/javascript; charset=utf-8"},
    {"compare.js", &assets::compare_js, "application/javascript; charset=utf-8"},
    {"views.js", &assets::views_js, "application/javascript; charset=utf-8"},
    {"app.js", &assets::app_js, "application/javascript; charset=utf-8"},
    {"style.css", &assets::style_css, "text/css; charset=utf-8"},
}};

std::string assemble(std::string_view head, std::string_view scripts, std::string_view title) {
  std::string page(assets::index_html);
  auto replace = [&](std::string_view marker, std::string_view text) {
    const size_t at = page.find(marker);
    if (at != std::string::npos) page.replace(at, marker.size(), text);
  };
  replace("<!--TITLE-->", title);
  replace("<!--HEAD-->", head);
  replace("<!--SCRIPTS-->", scripts);
  return page;
}

// Inline <script> text must not close its element early.
std::string script_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string escape_html(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::optional<Asset> static_asset(const std::string& name) {
  for (const Named& a : kAssets) {
    if (name == a.name) return Asset{*a.text, a.content_type};
  }
  return std::nullopt;
}

std::string live_page() {
  std::string scripts;
  for (const Named& a : kAssets) {
    if (std::string_view(a.name).ends_with(".js")) {
      scripts += std::string("<script src=\"static/") + a.name + "\"></script>\n";
    }
  }
  return assemble("<link rel=\"stylesheet\" href=\"static/style.css\">", scripts,
                  "tunerun dashboard");
}

std::string static_page(const std::vector<std::pair<std::string, std::string>>& answers,
                        const std::string& title) {
  std::string scripts = "<script>window.TUNERUN_REPORT = {";
  for (size_t i = 0; i < answers.size(); ++i) {
    if (i > 0) scripts += ',';
    scripts +=
        script_safe(Json(answers[i].first).dump(-1, ' ', false, Json::error_handler_t::replace));
    scripts += ':';
    scripts += script_safe(answers[i].second);
  }
  scripts += "};</script>\n";
  for (const Named& a : kAssets) {
    if (std::string_view(a.name).ends_with(".js")) {
      // Chart.js's minified text holds no "</": only the data can.
      scripts += "<script>\n" + script_safe(*a.text) + "\n</script>\n";
    }
  }
  return assemble("<style>\n" + std::string(assets::style_css) + "\n</style>", scripts,
                  escape_html(title));
}

}  // namespace tune::dashboard
