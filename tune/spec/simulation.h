// The rules of [simulation] that need more than one field: which configs a
// simulated curve reads, and whether a replayed curve table holds them.
#pragma once

#include "tune/spec/experiment.h"

namespace tune::sim {

// The rules of [simulation] curve and curve_table for a spec that runs on
// launcher "sim": a known curve; a curve_table with "table" only, which
// loads; every family parameter or table column defined by a non-empty
// param_space. Throws ConfigError keyed "simulation.curve",
// "simulation.curve_table" (a table's own errors say file:line:column) or
// "param_space".
void check_curves(const ExperimentSpec& spec);

}  // namespace tune::sim
