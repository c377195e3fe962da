// Tabulated curves (train/builtins/curve_table.h): a table read as a user writes
// it, a config picked by its parameter values, and errors that say where.
#include "train/builtins/curve_table.h"

#include <doctest/doctest.h>

#include "../tune/test_util.h"

using namespace tune;

namespace {

// Two configs, rows out of order, a comment, a blank line, spaces.
const char* kTwoConfigs = R"(# lr, width: the parameters
lr,model.width,opt,epoch,accuracy,loss,epoch_s
0.01,64,adam,2,0.6,0.4,31
0.01,64,adam,1,0.5,0.5,30

0.1, 128 ,sgd,1,0.7,0.3,29.5
)";

std::string error_of(const std::filesystem::path& file) {
  try {
    sim::CurveTable::load(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a curve table gives each config its rows in epoch order") {
  test::ScratchDir dir;
  const auto file = dir.write("curves.csv", kTwoConfigs);
  const auto table = sim::CurveTable::load(file);
  CHECK(table.parameters() == std::vector<std::string>{"lr", "model.width", "opt"});
  CHECK(table.metric_names() == std::vector<std::string>{"accuracy", "loss"});
  CHECK(table.num_configs() == 2);
  // 0.010 is 0.01; a nested table's key is dotted; other keys do not matter.
  const auto& curve = table.curve_for(
      Config(Json{{"lr", 0.010}, {"model", {{"width", 64}}}, {"opt", "adam"}, {"iterations", 9}}));
  REQUIRE(curve.metrics.size() == 2);
  CHECK(curve.metrics[0] == Json{{"accuracy", 0.5}, {"loss", 0.5}});
  CHECK(curve.metrics[1] == Json{{"accuracy", 0.6}, {"loss", 0.4}});
  CHECK(curve.epoch_s == std::vector<std::optional<double>>{30.0, 31.0});
  const auto& other =
      table.curve_for(Config(Json{{"lr", 0.1}, {"model", {{"width", 128}}}, {"opt", "sgd"}}));
  CHECK(other.metrics == std::vector<Json>{{{"accuracy", 0.7}, {"loss", 0.3}}});
}

TEST_CASE("a config the table lacks is an error naming the config and the file") {
  test::ScratchDir dir;
  const auto file = dir.write("curves.csv", kTwoConfigs);
  const auto table = sim::CurveTable::load(file);
  try {
    table.curve_for(Config(Json{{"lr", 0.02}, {"model", {{"width", 64}}}, {"opt", "adam"}}));
    FAIL("no error");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find(R"(lr = 0.02, model.width = 64, opt = "adam")") != std::string::npos);
    CHECK(what.find("has no rows in the curve table " + file.string()) != std::string::npos);
  }
  try {
    table.curve_for(Config(Json{{"lr", 0.01}, {"opt", "adam"}}));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "model.width");
  }
}

TEST_CASE("a malformed table is refused at its file, line and column") {
  test::ScratchDir dir;
  std::string text = kTwoConfigs;
  text.replace(text.find("0.6,0.4"), 3, "0.x");
  auto file = dir.write("bad.csv", text);
  CHECK(error_of(file) == file.string() + ":3:16: '0.x' is not a number (accuracy)");

  file = dir.write("short.csv", "lr,epoch,accuracy\n0.1,1\n");
  CHECK(error_of(file) == file.string() + ":2:1: 2 fields, the header has 3");

  file = dir.write("twice.csv", "lr,epoch,accuracy\n0.1,1,0.5\n0.1,2,0.6\n0.1,1,0.7\n");
  CHECK(error_of(file) == file.string() + ":4:5: epoch 1 of this config again (first at line 2)");

  file = dir.write("noepoch.csv", "lr,accuracy\n0.1,0.5\n");
  CHECK(error_of(file) == file.string() + ": the header names no 'epoch' column");

  file = dir.write("fraction.csv", "lr,epoch,accuracy\n0.1,1.5,0.5\n");
  CHECK(error_of(file) == file.string() + ":2:5: epoch '1.5' is not an integer");

  CHECK(error_of(dir.path() / "absent.csv") ==
        (dir.path() / "absent.csv").string() + ": cannot read the curve table");
}
