#include "train/models/text.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace train::models {

std::string read_fortunes(const std::filesystem::path& dir, int64_t max_chars) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const auto& path = entry.path();
    if (entry.is_symlink() || !entry.is_regular_file() || path.has_extension()) continue;
    files.push_back(path);
  }
  if (files.empty()) {
    throw tune::ConfigError(dir.string() + ": no fortune files (apt-get install fortunes)");
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream raw;
    raw << in.rdbuf();
    std::istringstream lines(raw.str());
    std::string line, fortune;
    while (std::getline(lines, line)) {
      if (line == "%") {
        if (!fortune.empty()) text += fortune;
        fortune.clear();
        continue;
      }
      for (char c : line) {
        if (c == '\t') c = ' ';
        if (c >= 32 && c <= 126) fortune += c;
      }
      fortune += '\n';
    }
    if (!fortune.empty()) text += fortune;
    if (max_chars > 0 && static_cast<int64_t>(text.size()) >= max_chars) {
      text.resize(max_chars);
      break;
    }
  }
  return text;
}

CharTokenizer::CharTokenizer(std::string_view text) : ids_(256, -1) {
  for (unsigned char c : text) ids_[c] = 0;
  for (int c = 0; c < 256; ++c) {
    if (ids_[c] == 0) {
      ids_[c] = static_cast<int64_t>(chars_.size());
      chars_ += static_cast<char>(c);
    }
  }
}

int64_t CharTokenizer::id(char c) const {
  const int64_t id = ids_[static_cast<unsigned char>(c)];
  if (id < 0) {
    throw tune::ConfigError(std::string("CharTokenizer: character '") + c +
                            "' is not in the vocabulary");
  }
  return id;
}

std::vector<int64_t> CharTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(id(c));
  return ids;
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string text;
  for (int64_t id : ids) text += id >= 0 && id < vocab_size() ? chars_[id] : '?';
  return text;
}

TensorDataset make_windows(const std::vector<int64_t>& ids, int64_t context) {
  const int64_t n = context > 0 ? (static_cast<int64_t>(ids.size()) - 1) / context : 0;
  if (n < 1) {
    throw tune::ConfigError("make_windows: " + std::to_string(ids.size()) +
                            " tokens hold no window of " + std::to_string(context + 1));
  }
  at::Tensor all = at::tensor(ids, at::kLong);
  at::Tensor data = all.narrow(0, 0, n * context).view({n, context}).clone();
  at::Tensor target = all.narrow(0, 1, n * context).view({n, context}).clone();
  return {data, target};
}

}  // namespace train::models
