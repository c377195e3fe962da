// `tunerun validate` on sweeps for the SSH launcher: a loopback control
// address is refused (the hosts could not reach it), and so is a hostfile
// that cannot be read as one. Needs no SSH host.
#include <doctest/doctest.h>

#include "../tune/test_util.h"

using namespace tune;

namespace {

std::string sweep(const std::string& cluster) {
  return "name = \"v\"\nmetric = \"accuracy\"\nmode = \"max\"\n[trainable]\n"
         "builtin = \"learning_curve\"\n[param_space]\nspeed = 0.1\n\n[cluster]\n"
         "launcher = \"ssh\"\nhostfile = \"hosts\"\n" +
         cluster;
}

}  // namespace

TEST_CASE("validate refuses the SSH launcher with a loopback control address, naming the key") {
  test::ScratchDir dir;
  dir.write("hosts", "h1 slots=2\n");
  dir.write("address.toml", sweep("control_address = \"127.0.0.1\"\n"));
  auto run = test::run_tunerun("validate address.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("cluster.control_address") != std::string::npos);
  CHECK(run.output.find("loopback") != std::string::npos);
  CHECK(run.output.find("control_interface") != std::string::npos);  // how to choose

  dir.write("interface.toml", sweep("control_interface = \"lo\"\n"));
  run = test::run_tunerun("validate interface.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("cluster.control_interface") != std::string::npos);

  // With an address the hosts route to, the sweep is valid.
  dir.write("good.toml", sweep("control_address = \"10.1.2.3\"\n"));
  run = test::run_tunerun("validate good.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 0);

  // Without one, `run` refuses before starting anything (its --control-address may give one).
  dir.write("none.toml", sweep(""));
  run = test::run_tunerun("run none.toml --storage-path runs", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("cluster.control_address") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.path() / "runs/v/experiment.db"));
  // Nor from the command line, over a sweep file that names another launcher.
  std::string local = sweep("control_address = \"10.1.2.3\"\n");
  local.replace(local.find("\"ssh\""), 5, "\"local\"");
  dir.write("local.toml", local);
  run = test::run_tunerun(
      "run local.toml --launcher ssh --control-address 127.0.0.1 --storage-path runs", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("cluster.control_address") != std::string::npos);
}

TEST_CASE("validate refuses a hostfile it cannot read as one, naming its line") {
  test::ScratchDir dir;
  dir.write("hosts", "h1 slots=2\nh2 slots=two\n");
  dir.write("bad.toml", sweep("control_address = \"10.1.2.3\"\n"));
  auto run = test::run_tunerun("validate bad.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("hosts:2:") != std::string::npos);
  CHECK(run.output.find("slots=two") != std::string::npos);
  std::filesystem::remove(dir.path() / "hosts");
  run = test::run_tunerun("validate bad.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("cluster.hostfile") != std::string::npos);
}
