// Trainables: the functions workers run, registered by name.
//
// A train function runs once per rank with the trial's config and reports
// through train::report (train/session.h). Returning normally ends the trial
// as TERMINATED; throwing ends it as ERROR with the exception's message.
//
// The CLI finds trainables by name: the built-ins (train/builtins/) and any
// registered by a shared library. Registration happens before workers start
// and is not thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/config.h"

namespace train {

using TrainFunc = std::function<void(const tune::Config& config)>;

// Registers `func` under `name`, replacing any earlier one of that name.
void register_trainable(const std::string& name, TrainFunc func);

// The function registered under `name`, or nullptr.
const TrainFunc* find_trainable(const std::string& name);

// Every registered name, sorted.
std::vector<std::string> trainable_names();

}  // namespace train
