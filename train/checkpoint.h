// Checkpoints: a directory of files that captures a trial's training state.
//
// A train function saves its state into a directory (ideally one from
// make_checkpoint_dir(), on the same filesystem as the trial, so publishing
// is a rename) and passes it to train::report. report() takes ownership: the
// directory's files move into the trial's checkpoint_<iteration:06d>/,
// merged with those of the other ranks for the same iteration (use
// rank-specific file names when ranks save different state). The controller
// publishes the merged directory atomically (staged, fsynced, renamed) before
// report() returns, so a checkpoint a trial can see is always complete.
#pragma once

#include <filesystem>
#include <optional>

namespace train {

class Checkpoint {
 public:
  static Checkpoint from_directory(std::filesystem::path dir) { return Checkpoint(std::move(dir)); }
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit Checkpoint(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// A new empty directory inside the trial's directory for this rank to save
// into. Throws tune::Error outside a worker.
std::filesystem::path make_checkpoint_dir();

// The checkpoint this run starts from: the trial's latest when it resumes
// (after a pause, a failure or an experiment restore), a donor's under PBT,
// nullopt on a fresh start. Read-only: never write into it.
std::optional<Checkpoint> get_checkpoint();

}  // namespace train
