// The spec table walked row by row: each field's example reaches the spec
// through a sweep file, survives the JSON round trip, and a value of another
// type is refused by both with the field's key. Python's keywords walk the
// same table in tests/python/test_spec_fields.py.
#include <doctest/doctest.h>
#include <toml++/toml.h>

#include <set>

#include "train/builtins/builtins.h"
#include "tune/spec/fields.h"
#include "tune/spec/json.h"
#include "tune/spec/sweep_file.h"

using tune::ConfigError;
using tune::Json;
using tune::SpecField;

namespace {

// A valid sweep, as JSON, with the field set to `value`.
Json sweep_with(const SpecField& field, const Json& value) {
  Json sweep = {{"metric", "loss"}, {"trainable", {{"builtin", "noop"}}}};
  std::string pointer = "/" + std::string(field.key);
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  sweep[Json::json_pointer(pointer)] = value;
  return sweep;
}

// A value of another type than the field's.
Json wrong_type(const SpecField& field) {
  return field.access.type == "string" || field.access.type == "path" ||
                 field.access.type.find('|') != std::string_view::npos
             ? Json(1)
             : Json("1");
}

}  // namespace

TEST_CASE("every row's example reaches the spec from a sweep file and back from its JSON") {
  train::register_builtin_trainables();
  for (const SpecField& field : tune::spec_fields()) {
    CAPTURE(field.key);
    const Json example = Json::parse(field.example);
    CHECK(example != tune::field_default(field));

    const auto spec =
        tune::parse_sweep(tune::json_to_toml(sweep_with(field, example)), "sweep.toml");
    CHECK(tune::field_value(field, spec) == example);

    const Json json = tune::experiment_spec_to_json(spec);
    tune::ExperimentSpec back;
    tune::read_spec_json(back, json);
    CHECK(tune::field_value(field, back) == example);
    // --print-config shows it at its key, and that TOML parses to it again.
    const toml::table printed = toml::parse(tune::json_to_toml(json));
    CHECK((printed.at_path(field.key).is_value() || printed.at_path(field.key).is_array()));
  }
}

TEST_CASE("a value of another type is refused at the field's key, with the sweep file's line") {
  train::register_builtin_trainables();
  for (const SpecField& field : tune::spec_fields()) {
    CAPTURE(field.key);
    const std::string text = tune::json_to_toml(sweep_with(field, wrong_type(field)));
    try {
      tune::parse_sweep(text, "sweep.toml");
      FAIL("no error for:\n" << text);
    } catch (const ConfigError& e) {
      CHECK(e.key() == field.key);
      CHECK(e.message().starts_with("expected "));
      CHECK(e.line() == toml::parse(text).at_path(field.key).node()->source().begin.line);
    }
    tune::ExperimentSpec spec;
    try {
      tune::read_spec_json(spec, sweep_with(field, wrong_type(field)));
      FAIL("no error from JSON");
    } catch (const ConfigError& e) {
      CHECK(e.key() == field.key);
    }
  }
}

TEST_CASE("the table: keys unique, each with a doc and a type, sections as a sweep file has them") {
  std::set<std::string_view> keys;
  for (const SpecField& field : tune::spec_fields()) {
    CAPTURE(field.key);
    CHECK(keys.insert(field.key).second);
    CHECK_FALSE(field.doc.empty());
    CHECK_FALSE(field.access.type.empty());
  }
  CHECK(tune::spec_sections() ==
        std::vector<std::string_view>{"", "trainable", "search", "scheduler", "resources",
                                      "failure", "checkpoint", "cluster", "simulation"});
}
