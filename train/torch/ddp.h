// Distributed data parallel: train::prepare_model, as Ray Train's and
// PyTorch's DistributedDataParallel do it, over a c10d process group.
//
//   auto ddp = train::prepare_model(net);   // broadcasts rank 0's parameters
//   for (auto& batch : loader) {
//     ddp->zero_grad();                     // not optimizer.zero_grad(): see below
//     loss_fn(net->forward(batch.data), batch.target).backward();  // grads averaged
//     optimizer.step();
//   }
//
// How: every parameter's gradient is a view into a flat bucket (about
// bucket_cap_bytes each, in reverse registration order, which is roughly the
// order backward produces them). A hook on each parameter's gradient
// accumulator counts the bucket's gradients; when a bucket is complete its
// allreduce is launched asynchronously while backward goes on. At the end of
// backward a callback launches what is left (unused parameters) and waits for
// all, so when backward() returns the gradients are averaged over ranks.
// Buckets launch strictly in index order, so every rank issues the same
// collectives in the same order.
//
// Ranks on one host (the usual case: a trial's workers) skip the group's
// backend: all gradients are views into this rank's slot of one shared-memory
// segment, averaged in place at the end of backward (DdpOptions::
// shared_memory). On CPUs that beats overlapping: there is no idle core for
// communication to overlap with, and a 2 MB average costs well under a
// millisecond against 4-7 ms through Gloo's loopback TCP. A group that spans
// hosts with several ranks on a host averages hierarchically
// (train/torch/hierarchical_allreduce.h): through shared memory on each
// host, then through Gloo between one leader per host. A group with one rank
// per host uses the group's backend with the buckets above.
//
// Why our own reducer and not c10d::Reducer: Debian's reducer.hpp does not
// compile as shipped, and the Reducer's constructor changes between libtorch
// versions; ProcessGroup::allreduce and the gradient-accumulator hooks are
// stable from 1.13 to 2.x.
//
// Because gradients are views into buckets, libtorch 1.13's
// optimizer.zero_grad() throws ("Can't detach views in-place"): call
// zero_grad() here, which zeroes each bucket in place. A gradient replaced or
// set to none (libtorch 2.x's zero_grad) is copied back into its bucket at
// the next backward, so that works too, at the cost of a copy.
//
// Not supported: no_sync-style accumulation without communication (every
// backward() allreduces), sparse gradients, and automatic buffer broadcast
// before each forward (call broadcast_buffers() where a model's buffers,
// e.g. BatchNorm statistics, must agree).
//
// Thread safety: one thread per rank drives forward, backward and the
// calls below, as with PyTorch's DDP.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace torch::nn {
class Module;
}

namespace train {

struct DdpOptions {
  // The group to average over. Default (nullptr): default_process_group();
  // with none (a single rank) the model is left as it is.
  c10::intrusive_ptr<c10d::ProcessGroup> process_group;
  // Bucket size in bytes. PyTorch DDP's default, 25 MiB: fewer, larger
  // allreduces amortise per-collective latency; smaller ones overlap more of
  // backward.
  int64_t bucket_cap_bytes = int64_t{25} << 20;
  // The first bucket (the last layers' gradients, ready first) is small so
  // that communication starts early. PyTorch DDP: 1 MiB.
  int64_t first_bucket_bytes = int64_t{1} << 20;
  // Ranks on one host average gradients through a shared-memory segment
  // (train/torch/shared_memory_allreduce.h) instead of the group's backend:
  // for the 2 MB MLP gradient on 2 cores, under 1 ms per step against Gloo's
  // 4-7 ms. Used when every rank maps the segment and every trainable
  // parameter is a float32 CPU tensor; otherwise the group's backend, with
  // the buckets above.
  bool shared_memory = true;
  // This rank's host: ranks with the same name share a segment, ranks with
  // different names meet only through the group's backend. Empty, the
  // default: this machine's host name (gethostname), exchanged among ranks
  // when the model is prepared. Tests name hosts to play several on one.
  std::string host;
  // How long a rank waits for the others in a shared-memory average. As
  // ProcessGroupOptions::timeout: a hung peer fails the trial within a minute.
  std::chrono::milliseconds timeout{60'000};
  // Keep the memory a step frees for the next step rather than returning it
  // to the kernel (glibc malloc: a fixed 32 MiB mmap threshold, trimming
  // only past 1 GiB free). Process-wide and sticky. With glibc's dynamic
  // thresholds some processes re-fault ~10 MB of temporaries every LeNet
  // step (~2,900 page faults): the same binary did so when started from
  // some directories and not from others; on this VM that made a 1-rank step
  // ~5x slower (about 2,300 against 11,700 samples/s).
  bool keep_freed_memory = true;
};

// A model prepared for data-parallel training. Created by prepare_model.
class DistributedModel {
 public:
  struct Stats {
    int64_t steps = 0;              // backward passes synchronised
    int64_t buckets = 0;            // allreduces per step
    int64_t bytes_per_step = 0;     // gradient bytes each rank allreduces per step
    double allreduce_wait_s = 0.0;  // total time backward waited for allreduces to finish
    bool shared_memory = false;     // averaged through shared memory, not the group's backend
    int nodes = 1;                  // hosts the ranks run on (> 1 with shared_memory: hierarchical)
  };

  ~DistributedModel();
  DistributedModel(const DistributedModel&) = delete;
  DistributedModel& operator=(const DistributedModel&) = delete;

  // Sets every gradient to zero in place (one fill per bucket).
  void zero_grad();
  // Waits until the last backward's gradients are averaged. backward()
  // already does this before it returns; calling it again is a no-op.
  void finish_gradient_sync();
  // Copies rank 0's buffers to every rank (collective: all ranks call it).
  void broadcast_buffers();

  int world_size() const;
  Stats stats() const;

  struct Impl;
  explicit DistributedModel(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Broadcasts rank 0's parameters and buffers (bool, bfloat16, int16 too) to every rank (a
// collective: all ranks call it with the same architecture) and installs the gradient
// averaging described above. With world size 1 it only returns a handle
// whose zero_grad() zeroes gradients in place.
//
// The returned handle stays alive in a registry until release_model(module),
// preparing the same module again, or destroy_process_group(), so
// `train::prepare_model(net);` alone is enough. `module` must outlive that.
// Throws ProcessGroupError when a collective fails.
std::shared_ptr<DistributedModel> prepare_model(torch::nn::Module& module,
                                                const DdpOptions& options = {});

// Removes the gradient hooks of `module` and forgets its handle.
void release_model(torch::nn::Module& module);

// What DdpOptions::keep_freed_memory sets up, for a loop that trains a
// single rank without prepare_model. Process-wide and idempotent.
void keep_freed_memory();

}  // namespace train
