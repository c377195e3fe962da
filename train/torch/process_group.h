// Process groups for one trial's ranks: c10d's Gloo backend on CPU, NCCL on
// CUDA builds of libtorch.
//
// Three layers, as in Gloo: a rendezvous store (a c10d TCPStore hosted by
// rank 0 at MASTER_ADDR:MASTER_PORT, or any c10d::Store a caller brings, such
// as an in-memory HashStore for ranks that are threads), the backend that
// moves bytes (ProcessGroupGloo / ProcessGroupNCCL), and the algorithms on
// top (train/torch/ddp.h). We use c10d's backends as they are: they are the
// collective engines PyTorch itself uses, and stay portable to libtorch 2.x.
//
// Thread safety: a process group's collectives must be issued in the same
// order on every rank; issue them from one thread per rank.
#pragma once

#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "core/errors.h"

namespace train {

// A process group could not be formed or a collective failed or timed out.
class ProcessGroupError : public tune::TrialError {
 public:
  using TrialError::TrialError;
};

enum class Backend { kGloo, kNccl };

struct ProcessGroupOptions {
  // kNccl needs a CUDA build of libtorch; other builds throw ProcessGroupError.
  Backend backend = Backend::kGloo;
  // How long ranks wait for each other at rendezvous. torchrun: 900 s; ours
  // is short so that a group whose peer died fails its trial quickly.
  std::chrono::milliseconds rendezvous_timeout{60'000};
  // Limit for each collective. PyTorch's default is 30 min; a healthy step
  // here takes milliseconds, so a hung peer fails the trial within a minute.
  std::chrono::milliseconds timeout{60'000};
  // Gloo worker threads per process. PyTorch's default is 2; on a 2-core
  // machine each extra runnable thread costs scheduler ticks, and our
  // reducer issues one bucket at a time anyway.
  int gloo_threads = 1;
  // Address (or name) Gloo's transport binds to and advertises to peers.
  // Empty, the default: as PyTorch, the interface GLOO_SOCKET_IFNAME names
  // if set; else loopback when MASTER_ADDR is a loopback address or unset
  // (every rank on this host: nothing leaves it); else this host's name,
  // resolved (ranks on several hosts, MASTER_ADDR the first one).
  std::string gloo_hostname;
};

// Creates a process group over `store` (one key namespace per group: wrap a
// shared store in a c10d::PrefixStore). Blocks until all `world_size` ranks
// have joined. Throws ProcessGroupError.
c10::intrusive_ptr<c10d::ProcessGroup> new_process_group(c10::intrusive_ptr<c10d::Store> store,
                                                         int rank, int world_size,
                                                         const ProcessGroupOptions& options = {});

// A group of some of `group`'s ranks, as torch.distributed.new_group: every
// rank of `group` calls it, in the same order relative to other new_group
// calls, with the same `ranks` (ascending). Members get the subgroup (their
// rank in it is their index in `ranks`); the others get nullptr. It shares
// `group`'s rendezvous store under a prefix of its own, so `group` must have
// been made by new_process_group or init_process_group in this process.
// Throws ProcessGroupError.
c10::intrusive_ptr<c10d::ProcessGroup> new_group(
    const c10::intrusive_ptr<c10d::ProcessGroup>& group, const std::vector<int>& ranks);

// Forms this process's group from the torchrun-style environment (RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT): rank 0 hosts a TCPStore, the others
// connect to it. Becomes the default group that prepare_model and
// prepare_data_loader use. With WORLD_SIZE 1 (or unset) no group is formed
// and this returns nullptr. Throws ProcessGroupError (also when a default
// group exists already: destroy it first).
c10::intrusive_ptr<c10d::ProcessGroup> init_process_group(const ProcessGroupOptions& options = {});

// The default group, or nullptr when none was formed (a single rank).
c10::intrusive_ptr<c10d::ProcessGroup> default_process_group();

// Releases the default group, its store and every model prepared for it
// (train/torch/ddp.h). Call at the end of a train function: a worker reused
// for the next trial forms a new group on a new port.
void destroy_process_group();

// init_process_group() for a scope: a train function's group is released
// however the function ends (a stop unwinds through report()), so a worker
// reused for the next trial forms a fresh group.
struct ProcessGroupScope {
  explicit ProcessGroupScope(const ProcessGroupOptions& options = {}) {
    init_process_group(options);
  }
  ~ProcessGroupScope() { destroy_process_group(); }
  ProcessGroupScope(const ProcessGroupScope&) = delete;
  ProcessGroupScope& operator=(const ProcessGroupScope&) = delete;
};

// Blocks until every rank of `group` got here. No-op for nullptr.
void barrier(const c10::intrusive_ptr<c10d::ProcessGroup>& group);

namespace detail {
// This process's rank and world size: the default group's if there is one,
// else RANK/WORLD_SIZE from the environment, else 0 and 1.
std::pair<int, int> rank_and_world_size();
// Whether new_group can make subgroups of `group` (it knows its store).
bool has_store(const c10::intrusive_ptr<c10d::ProcessGroup>& group);
}  // namespace detail

}  // namespace train
