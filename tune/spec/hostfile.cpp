#include "tune/spec/hostfile.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace tune {
namespace {

// A count of CPUs or GPUs; -1 when `text` is not one.
int count(std::string_view text) {
  int n = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  return ec == std::errc() && end == text.data() + text.size() && n >= 0 ? n : -1;
}

}  // namespace

std::vector<SshHost> parse_hostfile(std::string_view text, const std::string& source) {
  std::vector<SshHost> hosts;
  int number = 0;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    ++number;
    auto bad = [&](const std::string& what) {
      return ConfigError(
          fmt::format("{} (a line is HOST [slots=N] [cpus=N] [gpus=N], or HOST:N)", what), source,
          number);
    };
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    SshHost host;
    int slots = -1, cpus = -1;
    if (const size_t colon = word.rfind(':'); colon != std::string::npos) {
      slots = count(std::string_view(word).substr(colon + 1));
      if (slots < 1) throw bad(fmt::format("'{}' is not HOST:N with N >= 1", word));
      word.erase(colon);
    }
    host.destination = word;
    host.name = word.substr(word.find('@') + 1);
    if (host.name.empty()) throw bad(fmt::format("'{}' names no host", word));
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string key = word.substr(0, eq);
      const int n = eq == std::string::npos ? -1 : count(std::string_view(word).substr(eq + 1));
      if (key != "slots" && key != "cpus" && key != "gpus") {
        throw bad(fmt::format("unknown field '{}' of host {}", word, host.name));
      }
      if (n < 0 || (key != "gpus" && n < 1)) {
        throw bad(fmt::format("{} of host {} must be a whole number{}", word, host.name,
                              key == "gpus" ? " >= 0" : " >= 1"));
      }
      (key == "slots" ? slots : key == "cpus" ? cpus : host.gpus) = n;
    }
    host.cpus = cpus > 0 ? cpus : slots > 0 ? slots : 1;
    for (const auto& other : hosts) {
      if (other.name == host.name) throw bad(fmt::format("host {} is named twice", host.name));
    }
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) throw ConfigError("the hostfile names no host", source);
  return hosts;
}

std::vector<SshHost> read_hostfile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (path.empty() || !in) {
    throw ConfigError::at_key(
        "cluster.hostfile",
        path.empty() ? std::string("launcher \"ssh\" needs a hostfile: the hosts ranks run on, one "
                                   "a line (HOST slots=N gpus=M)")
                     : fmt::format("cannot read hostfile {}", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_hostfile(text.str(), path.string());
  } catch (const ConfigError& e) {
    throw ConfigError(e.message(), e.file(), e.line(), "cluster.hostfile");
  }
}

void check_ssh_cluster(const ExperimentSpec& spec) {
  if (spec.cluster.launcher != "ssh") return;
  if (spec.cluster.hostfile.empty()) {
    throw ConfigError::at_key("cluster.hostfile",
                              "launcher \"ssh\" needs a hostfile: the hosts ranks run on, one a "
                              "line (HOST slots=N gpus=M)");
  }
}

}  // namespace tune
