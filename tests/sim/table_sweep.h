// A curve table and a sweep that replays it on simulated ranks, shared by
// the tests of the curves ranks report and of `tunerun simulate`.
#pragma once

#include <string>

#include "../tune/test_util.h"

namespace tune::test {

// Two learning rates x two depths, three epochs each; config (0.1, 4) has
// only two.
inline constexpr const char* kCurves = R"(lr,layers,epoch,accuracy,loss,epoch_s
0.01,2,1,0.30,0.70,0.01
0.01,2,2,0.50,0.50,0.01
0.01,2,3,0.55,0.45,0.01
0.01,4,1,0.20,0.80,0.01
0.01,4,2,0.60,0.40,0.01
0.01,4,3,0.70,0.30,0.01
0.1,2,1,0.40,0.60,0.01
0.1,2,2,0.45,0.55,0.01
0.1,2,3,0.46,0.54,0.01
0.1,4,1,0.35,0.65,0.01
0.1,4,2,0.50,0.50,0.01
)";

inline constexpr const char* kTableSweep = R"(
name = "table"
metric = "accuracy"
mode = "max"
[trainable]
builtin = "learning_curve"
[param_space]
lr = { grid_search = [0.01, 0.1] }
layers = { grid_search = [2, 4] }
[cluster]
launcher = "sim"
[simulation]
nodes = 2
cpus_per_node = 1
curve = "table"
curve_table = "tables/curves.csv"
)";

// Writes tables/curves.csv and table.toml (`sweep`) into `dir`.
inline void write_table_sweep(const ScratchDir& dir, const std::string& sweep = kTableSweep) {
  std::filesystem::create_directories(dir.path() / "tables");
  dir.write("tables/curves.csv", kCurves);
  dir.write("table.toml", sweep);
}

}  // namespace tune::test
