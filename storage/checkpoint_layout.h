// The checkpoint directories of a trial: where files wait between a rank's
// report() and the controller's publish, and where published checkpoints
// live. Shared by the worker runtime (which stages) and the controller's
// CheckpointManager (storage/checkpoint_manager.h, which publishes). All
// paths live inside the trial directory, so every move is a rename on one
// filesystem.
//
//   <trial_dir>/.scratch/rank<R>_<N>/             make_checkpoint_dir()
//   <trial_dir>/.staging/checkpoint_<K:06d>/      rank files for iteration K, merged
//   <trial_dir>/checkpoint_<K:06d>/               published (atomic rename)
#pragma once

#include <cstdint>
#include <filesystem>

namespace tune::storage {

std::filesystem::path scratch_dir(const std::filesystem::path& trial_dir, int rank, int64_t n);
std::filesystem::path staging_dir(const std::filesystem::path& trial_dir, int64_t iteration);
std::filesystem::path checkpoint_dir(const std::filesystem::path& trial_dir, int64_t iteration);

// Moves every entry of `source` into `staging` (created if needed; entries
// already there from other ranks are kept, same names are replaced), then
// removes `source` and fsyncs what it staged and `staging` itself. Copies
// when a rename crosses filesystems. Throws Error naming the paths. The
// rank that wrote the files pays for their fsync, in parallel with the
// other ranks and trials, not the controller's event loop.
void stage_checkpoint(const std::filesystem::path& source, const std::filesystem::path& staging);

// Renames `staging`, whose files every rank has fsynced (stage_checkpoint),
// to `published` (replacing an older directory of that name) and fsyncs the
// parent, so a crash leaves either no checkpoint or a complete one. Throws
// Error.
void publish_checkpoint(const std::filesystem::path& staging,
                        const std::filesystem::path& published);

// Copies a published checkpoint into another trial's directory (PBT's
// exploit), staged and published the same way. Files are shared, not
// copied, where the filesystem allows (reflink, else hard link): a
// published checkpoint is read-only, to the trial that wrote it and to its
// clones alike.
void clone_checkpoint(const std::filesystem::path& source, const std::filesystem::path& published);

// Removes what an earlier attempt staged but never published (.staging and
// .scratch): such files are not a checkpoint.
void clear_unpublished(const std::filesystem::path& trial_dir);

}  // namespace tune::storage
