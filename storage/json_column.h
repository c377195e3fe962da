// How the store writes a JSON value that may hold NaN or ±infinity, which
// JSON text has no tokens for (and SQLite 3.40's JSON functions refuse the
// JSON5 ones), so that the value reads back exactly while plain SQL keeps
// working on every row:
//
//  - the JSON column holds valid JSON: +inf is written as the number 1e999
//    and -inf as -1e999 (json_extract reads them as Inf and -Inf, Python's
//    json.loads as inf), NaN as null (what SQLite makes of a NaN anyway);
//  - a side column "<column>_nonfinite" holds NULL when the value has no
//    NaN or infinity, else a JSON object mapping the JSON pointer (RFC 6901)
//    of each one to "NaN", "Infinity" or "-Infinity", e.g.
//    {"/loss":"NaN","/grad/0":"-Infinity"}.
//
// The side column is the only way to tell a NaN from a null the user
// reported. Values without NaN or infinity are written exactly as before
// (nlohmann's dump, sorted keys) with a NULL side column.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/config.h"

namespace tune::storage {

struct JsonColumn {
  std::string text;                      // the JSON column
  std::optional<std::string> nonfinite;  // the side column; nullopt stores NULL
};

// Compact JSON text that never throws: nlohmann's dump (sorted keys), with
// invalid UTF-8 in strings replaced, since a metric must never make the store
// fail. NaN and infinity become null: for columns without a side column.
std::string dump_json_text(const Json& value);

// Never throws for a value nlohmann can hold; invalid UTF-8 in strings is
// replaced (a metric must never make the store fail).
JsonColumn encode_json_column(const Json& value);

// The inverse. An empty `text` reads as null; an empty `nonfinite` (the
// side column was NULL, or the file predates it) means "none". Throws
// Json::exception if either is not what encode_json_column writes.
Json decode_json_column(std::string_view text, std::string_view nonfinite);

// For readers that have only the JSON column (the dashboard, which sends
// JSON on and has no NaN or infinity either): parses it with ±1e999 read as
// null, as NaN is; returns a discarded value (Json::is_discarded) when the
// text is not valid JSON.
Json parse_json_column(std::string_view text);

}  // namespace tune::storage
