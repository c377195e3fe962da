// Text for the character-level GPT: Debian's fortunes (package `fortunes`,
// /usr/share/games/fortunes), a character tokenizer and fixed-length
// training windows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "train/torch/data.h"

namespace train::models {

inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

// Every fortune of the plain files in `dir` (not the *.dat indexes, not the
// *.u8 links), in file-name order, as one text: fortunes end with '\n',
// tabs become spaces, other bytes outside printable ASCII are dropped.
// `max_chars` > 0 keeps the first max_chars characters. Throws
// tune::ConfigError naming `dir` when it holds no fortune files.
std::string read_fortunes(const std::filesystem::path& dir = kFortunesDir, int64_t max_chars = 0);

// One token per distinct character of the text it was built from, in byte
// order (ids are stable for a given text).
class CharTokenizer {
 public:
  explicit CharTokenizer(std::string_view text);
  // Throws tune::ConfigError for a character outside the vocabulary.
  std::vector<int64_t> encode(std::string_view text) const;
  std::string decode(const std::vector<int64_t>& ids) const;
  int64_t vocab_size() const { return static_cast<int64_t>(chars_.size()); }
  int64_t id(char c) const;

 private:
  std::string chars_;
  std::vector<int64_t> ids_;  // by byte value; -1: not in the vocabulary
};

// Non-overlapping windows of context + 1 tokens: data [N, context] and
// target [N, context], the same window shifted by one token (next-token
// prediction). Throws tune::ConfigError when not one window fits.
TensorDataset make_windows(const std::vector<int64_t>& ids, int64_t context);

}  // namespace train::models
