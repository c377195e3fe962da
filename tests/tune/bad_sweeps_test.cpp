// The bad sweep file corpus (tests/data/bad_sweeps/): `tunerun validate` on
// each file must exit 2 and print the message its first line names:
//   # expect: FILE.toml:LINE: key 'KEY': MESSAGE
// Messages are the user interface of a mistake: a change to one shows here.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.h"

using tune::test::run_tunerun;

namespace {

const std::filesystem::path kCorpus =
    std::filesystem::path(TUNERUN_SOURCE_DIR) / "tests/data/bad_sweeps";

std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The text after "# expect: " on the file's first line; empty when absent.
std::string expectation(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  const std::string prefix = "# expect: ";
  return first.starts_with(prefix) ? first.substr(prefix.size()) : "";
}

}  // namespace

TEST_CASE("every bad sweep file exits 2 with the message it names") {
  const auto files = corpus_files();
  CHECK(files.size() >= 12);
  for (const auto& file : files) {
    const std::string expected = expectation(file);
    INFO("file: ", file.filename().string());
    REQUIRE_FALSE(expected.empty());
    // Run from the corpus directory, so messages name the file as a user
    // who typed `tunerun validate bad.toml` sees it.
    auto result = run_tunerun("validate " + file.filename().string(), kCorpus);
    INFO("output: ", result.output);
    CHECK(result.exit_code == 2);
    CHECK(result.output.find(expected) != std::string::npos);
    CHECK(result.output.find("error: ") == 0);
  }
}

TEST_CASE("run refuses a bad sweep file as validate does and writes nothing") {
  tune::test::ScratchDir dir;
  std::filesystem::copy_file(kCorpus / "unknown_trainable_key.toml",
                             dir.path() / "unknown_trainable_key.toml");
  auto result = run_tunerun("unknown_trainable_key.toml", dir.path());
  CHECK(result.exit_code == 2);
  CHECK(result.output.find(expectation(kCorpus / "unknown_trainable_key.toml")) !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs"));
}
