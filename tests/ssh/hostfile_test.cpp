// The SSH launcher's hostfile (tune/spec/hostfile.h): DeepSpeed's and
// Horovod's forms, and the errors that name the line.
#include "tune/spec/hostfile.h"

#include <doctest/doctest.h>

#include "core/errors.h"

using namespace tune;

TEST_CASE("a hostfile reads DeepSpeed's and Horovod's forms, comments and blank lines") {
  const auto hosts = parse_hostfile(
      "# lab boxes\n\ngpu-1 slots=4 gpus=4\n10.0.0.7 cpus=16 gpus=2 slots=3  # cpus wins\n"
      "alice@lab-3:8\nworker-0.trainers\n",
      "hosts");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].destination == "gpu-1");
  CHECK(hosts[0].cpus == 4);
  CHECK(hosts[0].gpus == 4);
  CHECK(hosts[1].cpus == 16);
  CHECK(hosts[1].gpus == 2);
  CHECK(hosts[2].destination == "alice@lab-3");
  CHECK(hosts[2].name == "lab-3");
  CHECK(hosts[2].cpus == 8);
  CHECK(hosts[3].cpus == 1);
  CHECK(hosts[3].gpus == 0);
}

TEST_CASE("a hostfile's errors name the file and line") {
  auto error_of = [](const std::string& text) {
    try {
      parse_hostfile(text, "hosts");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("h1\nh2 slots=x\n").find("hosts:2: slots=x") != std::string::npos);
  CHECK(error_of("h1 memory=4\n").find("unknown field 'memory=4'") != std::string::npos);
  CHECK(error_of("h1\nroot@h1\n").find("hosts:2: host h1 is named twice") != std::string::npos);
  CHECK(error_of("h1:0\n").find("HOST:N with N >= 1") != std::string::npos);
  CHECK(error_of("# nothing\n").find("names no host") != std::string::npos);
  CHECK(error_of("h1 slots=0\n").find(">= 1") != std::string::npos);
}
