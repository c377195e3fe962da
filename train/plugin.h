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
// Built-in trainables that need libtorch live in such a library, so that the
// controller (and every non-torch worker) never loads libtorch: next to the
// tunerun executable in a build tree, in lib/tunerun/ when installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace train {

inline constexpr const char* kRegisterSymbol = "tunerun_register_trainables";

// dlopens `path` and calls its tunerun_register_trainables. Loading the same
// library twice registers once. Throws tune::Error with dlerror()'s text.
void load_trainable_library(const std::filesystem::path& path);

// The library file of a built-in plugin trainable ("fashion_mnist_mlp" ->
// "libtunerun_fashion_mnist.so"), or nullopt for trainables in the executable.
std::optional<std::string> builtin_plugin_library(const std::string& name);

// Where the program `executable` looks for the built-in plug-in `library`,
// in order: its own folder (a build tree), then the installed plug-in folder
// relative to it (bin/../lib/tunerun, as cmake/install.cmake lays it out).
std::vector<std::filesystem::path> builtin_plugin_candidates(
    const std::string& library, const std::filesystem::path& executable);

}  // namespace train
