// `tunerun keys`: every key a sweep file takes, from the spec table
// (tune/spec/fields.h), as Markdown: its type, default, meaning and the
// Python keyword that sets it. docs/sweep-files.md holds this output between
// its spec-table markers (scripts/update_docs.sh rewrites it; the test
// docs/sweep_keys fails when the two differ), so the reference cannot drift
// from the code.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "tune/cli/commands.h"
#include "tune/spec/fields.h"

namespace tune::cli {
namespace {

// Text for a Markdown table cell: pipes escaped.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string default_text(const Json& value) {
  if (value.is_string() && value.get<std::string>().empty()) return "(empty)";
  return "`" + cell(value.dump()) + "`";
}

void print_keys() {
  for (std::string_view section : spec_sections()) {
    fmt::print("\n### {}\n\n", section.empty() ? "Top-level keys" : fmt::format("[{}]", section));
    fmt::print("| key | type | default | meaning | Python |\n|---|---|---|---|---|\n");
    for (const SpecField& field : spec_fields()) {
      if (field.section() != section) continue;
      fmt::print("| `{}` | {} | {} | {} | {} |\n", field.name(), cell(field.access.type),
                 default_text(field_default(field)), cell(field.doc),
                 field.python.empty() ? "" : "`" + std::string(field.python) + "`");
    }
  }
}

}  // namespace

void setup_keys(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "keys", "Print every key a sweep file takes (type, default, meaning, Python keyword) as "
              "Markdown");
  cmd->callback(print_keys);
}

}  // namespace tune::cli
