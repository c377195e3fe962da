// Trainables from shared libraries.
//
// A plugin library defines
//     extern "C" void tunerun_register_trainables();
// which calls train::register_trainable for each trainable it provides. The
// worker loads the library named in START before it looks the trainable up.
// The tunerun executable exports its symbols, so a plugin must not link its
// own copy of tunerun's libraries: train::report and friends resolve to the
// executable's.
//
// Built-in trainables that need libtorch live in such a library next to the
// tunerun executable, so that the controller (and every non-torch worker)
// never loads libtorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace train {

inline constexpr const char* kRegisterSymbol = "tunerun_register_trainables";

// dlopens `path` and calls its tunerun_register_trainables. Loading the same
// library twice registers once. Throws tune::Error with dlerror()'s text.
void load_trainable_library(const std::filesystem::path& path);

// The library file of a built-in plugin trainable ("fashion_mnist_mlp" ->
// "libtunerun_fashion_mnist.so"), or nullopt for trainables in the executable.
std::optional<std::string> builtin_plugin_library(const std::string& name);

}  // namespace train
