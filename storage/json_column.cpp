#include "storage/json_column.h"

#include <cmath>
#include <limits>

namespace tune::storage {
namespace {

constexpr std::string_view kInfinityToken = "1e999";  // -inf adds its '-'

bool is_nonfinite(const Json& value) {
  return value.is_number_float() && !std::isfinite(value.get<double>());
}

// The common case, no allocation: one walk that finds nothing.
bool has_nonfinite(const Json& value) {
  if (value.is_structured()) {
    for (const auto& child : value) {
      if (has_nonfinite(child)) return true;
    }
    return false;
  }
  return is_nonfinite(value);
}

const char* spelling(double value) {
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "Infinity" : "-Infinity";
}

// Writes `value` as nlohmann's compact dump does (sorted keys, no spaces),
// with ±inf as ±1e999 and NaN as null, and records each non-finite number's
// JSON pointer in `found`.
void write(const Json& value, const Json::json_pointer& at, std::string& out, Json& found) {
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, child] : value.items()) {
      if (!first) out += ',';
      first = false;
      out += dump_json_text(Json(key));
      out += ':';
      write(child, at / key, out, found);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out += ',';
      write(value[i], at / i, out, found);
    }
    out += ']';
  } else if (is_nonfinite(value)) {
    const double d = value.get<double>();
    found[at.to_string()] = spelling(d);
    if (std::isnan(d)) {
      out += "null";
    } else {
      if (d < 0) out += '-';
      out += kInfinityToken;
    }
  } else {
    out += dump_json_text(value);
  }
}

// nlohmann refuses numbers that overflow a double: outside strings, ±1e999
// becomes null. Only the store writes that token (nlohmann writes large
// finite numbers as 1.7976931348623157e+308), so no finite number changes.
std::string null_infinities(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    const size_t start = c == '-' ? i + 1 : i;
    if (text.substr(start, kInfinityToken.size()) == kInfinityToken) {
      out += "null";
      i = start + kInfinityToken.size() - 1;
      continue;
    }
    out += c;
  }
  return out;
}

double from_spelling(const Json& spelled) {
  const std::string& s = spelled.get_ref<const std::string&>();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return kInf;
  if (s == "-Infinity") return -kInf;
  throw Json::other_error::create(501, "unknown non-finite spelling '" + s + "'", nullptr);
}

}  // namespace

std::string dump_json_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

JsonColumn encode_json_column(const Json& value) {
  if (!has_nonfinite(value)) return {dump_json_text(value), std::nullopt};
  JsonColumn column;
  Json found = Json::object();
  write(value, Json::json_pointer(), column.text, found);
  column.nonfinite = dump_json_text(found);
  return column;
}

Json decode_json_column(std::string_view text, std::string_view nonfinite) {
  if (text.empty()) return Json();
  if (nonfinite.empty()) return Json::parse(text);
  Json value = Json::parse(null_infinities(text));
  const Json found = Json::parse(nonfinite);
  for (const auto& [pointer, spelled] : found.items()) {
    // at() rather than operator[]: a pointer that names nothing is an error,
    // not a new member.
    value.at(Json::json_pointer(pointer)) = from_spelling(spelled);
  }
  return value;
}

Json parse_json_column(std::string_view text) {
  return Json::parse(null_infinities(text), nullptr, /*allow_exceptions=*/false);
}

}  // namespace tune::storage
