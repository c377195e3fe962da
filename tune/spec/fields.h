// The experiment spec's fields, one row each: the one table that a sweep
// file (tune/spec/sweep_file.h), the spec's JSON form and `tunerun validate
// --print-config` (tune/spec/json.h), the Python keywords
// (bindings/run.cpp, tunerun/tune/tuner.py) and the rules
// (tune/spec/validation.h) all read. A row names the field as a sweep file
// writes it ("failure.max_failures": max_failures in [failure]; the same path
// in JSON), where it lives in ExperimentSpec (so its type, and its default:
// the member's initializer), what it means, its rule, the Python keyword that
// sets it, and an example value.
//
// Adding a field: a member of ExperimentSpec with its default, one row here,
// and in Python the keyword's dataclass field when Ray has one.
//
// Not rows, because each front end has its own form of them: the trainable's
// identity ([trainable] builtin, name, library, command), [param_space],
// [stop], and the plug-ins' options. Those options are free-form: every key
// of [search] but `algorithm` and of [scheduler] but `type` goes to the
// plug-in, whose factory checks it (search/factory.h, schedulers/factory.cpp).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "tune/spec/experiment.h"

namespace tune {

struct SpecField {
  // Reads and writes the member a row names (spec_fields.cpp makes one per
  // member type).
  struct Access {
    // "string", "path", "integer", "number", "bool", a choice of names
    // ("min|max", "PACK|SPREAD|STRICT_PACK|STRICT_SPREAD"), or for metric,
    // mode and warm_start "string|list", "min|max|list" and "path|list" (one
    // value or a list)
    std::string_view type;
    Json (*get)(const ExperimentSpec& spec);
    // Stores `value`; returns what was expected when it has another type.
    std::optional<std::string> (*set)(ExperimentSpec& spec, const Json& value);
  };
  std::string_view key;  // "failure.max_failures"; no dot: a top-level key
  Access access;
  std::string_view doc;  // what it means, and what its default means
  // The rule: whether a value keeps it (null: every value of the type
  // does), and the message when not, "{}" standing for the value.
  bool (*valid)(const Json& value);
  std::string_view rule;
  // Where Python sets it: "TuneConfig.KEYWORD" or "RunConfig.[PART.]KEYWORD"
  // (tunerun/tune/tuner.py reads these); empty: Python does not set it.
  std::string_view python;
  std::string_view example;  // a valid value other than the default, as JSON text

  std::string_view section() const;  // "failure"; "" for a top-level key
  std::string_view name() const;     // "max_failures"
};

// Every row, sections in the order a sweep file lists them.
std::span<const SpecField> spec_fields();

// The sections the rows name, in table order, the top level ("") first.
std::vector<std::string_view> spec_sections();

// The field's value in `spec` as JSON: a mode as "min" or "max", a path as
// a string.
Json field_value(const SpecField& field, const ExperimentSpec& spec);

// The field's default: its value in a default ExperimentSpec.
Json field_default(const SpecField& field);

// Stores `value` (a JSON scalar, or num_workers' [min, max]). Throws ConfigError keyed by the field
// when the value is not of the field's type; ranges are finish_spec's (tune/spec/validation.h),
// checked once all front ends are done.
void set_field(const SpecField& field, ExperimentSpec& spec, const Json& value);

}  // namespace tune
