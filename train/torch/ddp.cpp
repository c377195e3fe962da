#include "train/torch/ddp.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/module.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <chrono>
#include <map>
#include <mutex>

#include "train/torch/hierarchical_allreduce.h"
#include "train/torch/process_group.h"

namespace train {

// The Impl's parts, named outside an anonymous namespace: a class with
// linkage (DistributedModel::Impl) must not hold types that have none.
namespace ddp_detail {

struct Bucket {
  std::vector<at::Tensor> flat;  // one tensor: the argument allreduce takes by reference
  std::vector<size_t> params;    // indices into Impl::params
  size_t pending = 0;            // gradients not yet ready in this backward
  c10::intrusive_ptr<c10d::Work> work;
};

struct Param {
  at::Tensor variable;
  at::Tensor view;  // this parameter's slice of its bucket, shaped like it
  size_t bucket = 0;
  std::shared_ptr<torch::autograd::Node> accumulator;  // kept alive: it holds our hook
  uintptr_t hook_key = 0;
};

}  // namespace ddp_detail

namespace {

using Clock = std::chrono::steady_clock;

// The type a tensor of `type` travels as. Gloo reduces and broadcasts only
// float, double, half and 8/32/64-bit integers; the others go through a type
// that holds every one of their values (a bool mask as bytes, bfloat16 as
// float, int16 as int32), so the copy back is exact.
at::ScalarType wire_type(at::ScalarType type) {
  switch (type) {
    case at::kBool:
      return at::kByte;
    case at::kBFloat16:
      return at::kFloat;
    case at::kShort:
      return at::kInt;
    default:
      return type;
  }
}

// Broadcasts `tensors` from rank 0 as one flat tensor per dtype.
void broadcast_coalesced(c10d::ProcessGroup& group, const std::vector<at::Tensor>& tensors) {
  torch::NoGradGuard no_grad;  // autograd rejects in-place writes to leaves otherwise
  std::map<at::ScalarType, std::vector<at::Tensor>> by_type;
  for (const auto& t : tensors) by_type[t.scalar_type()].push_back(t);
  for (auto& [type, group_tensors] : by_type) {
    std::vector<at::Tensor> flat_parts;
    for (const auto& t : group_tensors) flat_parts.push_back(t.detach().reshape(-1));
    std::vector<at::Tensor> flat{at::cat(flat_parts).to(wire_type(type))};
    try {
      group.broadcast(flat, c10d::BroadcastOptions{})->wait();
    } catch (const std::exception& e) {
      throw ProcessGroupError(std::string("broadcast of model state failed: ") + e.what());
    }
    int64_t offset = 0;
    for (auto& t : group_tensors) {
      t.detach().copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

}  // namespace

struct DistributedModel::Impl {
  using Bucket = ddp_detail::Bucket;
  using Param = ddp_detail::Param;

  torch::nn::Module* module = nullptr;
  c10::intrusive_ptr<c10d::ProcessGroup> group;  // nullptr: world size 1
  // Set: one bucket, this rank's slot of its host's segment, averaged at the
  // end of backward.
  std::unique_ptr<detail::HierarchicalAllreduce> shm;
  std::chrono::milliseconds timeout{0};
  std::vector<Param> params;
  std::vector<Bucket> buckets;
  bool in_backward = false;
  size_t next_launch = 0;  // buckets launch in index order on every rank
  Stats stats;

  void build_buckets(const DdpOptions& options);
  bool open_shared_memory(const std::vector<at::Tensor>& trainable,
                          const detail::HostLayout& layout);
  void on_grad_ready(size_t index);
  void launch_ready();
  void launch(Bucket& bucket);
  void finish();
  void remove_hooks();
};

void DistributedModel::Impl::build_buckets(const DdpOptions& options) {
  std::vector<at::Tensor> trainable;
  for (const auto& p : module->parameters()) {
    if (p.requires_grad()) trainable.push_back(p);
  }
  // Reverse registration order: backward reaches the last layers first.
  std::reverse(trainable.begin(), trainable.end());
  timeout = options.timeout;
  const detail::HostLayout layout = detail::exchange_host_layout(
      *group, options.host.empty() ? detail::this_host() : options.host);
  stats.nodes = layout.num_hosts();
  const bool shared = options.shared_memory && open_shared_memory(trainable, layout);
  const int64_t first_cap = options.first_bucket_bytes;
  const int64_t cap = options.bucket_cap_bytes;
  // Assign parameters to buckets, one dtype and device per bucket; all in one
  // when they go through shared memory.
  std::vector<std::vector<size_t>> members;
  if (shared) members.emplace_back();
  int64_t bytes = 0;
  for (size_t i = 0; i < trainable.size(); ++i) {
    if (shared) {
      members.back().push_back(i);
      continue;
    }
    const at::Tensor& t = trainable[i];
    int64_t size = t.numel() * static_cast<int64_t>(t.element_size());
    bool same_kind = !members.empty() &&
                     trainable[members.back().front()].scalar_type() == t.scalar_type() &&
                     trainable[members.back().front()].device() == t.device();
    int64_t limit = members.size() <= 1 ? first_cap : cap;
    if (members.empty() || !same_kind || (bytes > 0 && bytes + size > limit)) {
      members.emplace_back();
      bytes = 0;
    }
    members.back().push_back(i);
    bytes += size;
  }
  for (auto& member_list : members) {
    Bucket bucket;
    int64_t numel = 0;
    for (size_t i : member_list) numel += trainable[i].numel();
    const at::Tensor& first = trainable[member_list.front()];
    if (shm) {
      // The segment stays mapped while any gradient view of it lives.
      const auto& segment = shm->segment();
      bucket.flat = {torch::from_blob(
          segment->slot(), {numel}, [keep = segment](void*) {},
          first.options().requires_grad(false))};
      stats.shared_memory = true;
    } else {
      bucket.flat = {at::zeros({numel}, first.options().requires_grad(false))};
    }
    int64_t offset = 0;
    for (size_t i : member_list) {
      const at::Tensor& t = trainable[i];
      Param param;
      param.variable = t;
      // Strided like its parameter where that is dense (a channels-last
      // weight gets a channels-last view), as PyTorch's DDP does: the
      // gradient autograd accumulates into it has its parameter's layout.
      const at::Tensor slice = bucket.flat[0].narrow(0, offset, t.numel());
      param.view = t.is_non_overlapping_and_dense() ? slice.as_strided(t.sizes(), t.strides())
                                                    : slice.view(t.sizes());
      param.bucket = buckets.size();
      offset += t.numel();
      at::Tensor& grad = param.variable.mutable_grad();
      if (grad.defined()) param.view.copy_(grad);
      grad = param.view;
      bucket.params.push_back(params.size());
      params.push_back(std::move(param));
    }
    stats.bytes_per_step += numel * static_cast<int64_t>(first.element_size());
    buckets.push_back(std::move(bucket));
  }
  stats.buckets = static_cast<int64_t>(buckets.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Param& param = params[i];
    param.accumulator = torch::autograd::impl::grad_accumulator(param.variable);
    param.hook_key =
        param.accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, i](const torch::autograd::variable_list& outputs,
                      const torch::autograd::variable_list&) {
              on_grad_ready(i);
              return outputs;
            }));
  }
}

// A collective: every rank calls it with the same architecture. A host's ranks average through
// shared memory when every rank can map its host's segment and some host runs more than one rank
// (with one rank per host the group's buckets overlap backward).
bool DistributedModel::Impl::open_shared_memory(const std::vector<at::Tensor>& trainable,
                                                const detail::HostLayout& layout) {
  int64_t numel = 0;
  for (const auto& t : trainable) {
    if (t.scalar_type() != at::kFloat || !t.device().is_cpu() || t.is_sparse()) return false;
    numel += t.numel();
  }
  if (numel == 0) return false;
  if (layout.num_hosts() == group->getSize()) return false;
  shm = detail::HierarchicalAllreduce::open(group, layout, numel);
  return shm != nullptr;
}

void DistributedModel::Impl::on_grad_ready(size_t index) {
  if (!in_backward) {
    in_backward = true;
    next_launch = 0;
    for (auto& bucket : buckets) bucket.pending = bucket.params.size();
    torch::autograd::Engine::get_default_engine().queue_callback([this] { finish(); });
  }
  Param& param = params[index];
  at::Tensor& grad = param.variable.mutable_grad();
  if (!grad.defined() || !grad.is_same(param.view)) {
    // The gradient was set to none or replaced (e.g. libtorch 2.x's
    // zero_grad): move it back into the bucket.
    torch::NoGradGuard no_grad;
    if (grad.defined()) {
      param.view.copy_(grad);
    } else {
      param.view.zero_();
    }
    grad = param.view;
  }
  Bucket& bucket = buckets[param.bucket];
  if (bucket.pending > 0) --bucket.pending;
  launch_ready();
}

void DistributedModel::Impl::launch_ready() {
  if (shm) return;  // one synchronous average at the end of backward
  while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
    launch(buckets[next_launch++]);
  }
}

void DistributedModel::Impl::launch(Bucket& bucket) {
  torch::NoGradGuard no_grad;
  bucket.flat[0].div_(group->getSize());  // pre-divide: SUM then gives the mean
  try {
    bucket.work = group->allreduce(bucket.flat, c10d::AllreduceOptions{});
  } catch (const std::exception& e) {
    throw ProcessGroupError(std::string("gradient allreduce failed: ") + e.what());
  }
}

void DistributedModel::Impl::finish() {
  if (!in_backward) return;
  in_backward = false;
  // Parameters that took no part in this backward: their buckets go now,
  // with whatever their gradients hold (zero after zero_grad()).
  for (auto& bucket : buckets) bucket.pending = 0;
  launch_ready();
  auto start = Clock::now();
  if (shm) shm->allreduce_mean(timeout);
  for (auto& bucket : buckets) {
    if (!bucket.work) continue;
    try {
      bucket.work->wait();
    } catch (const std::exception& e) {
      throw ProcessGroupError(std::string("gradient allreduce failed: ") + e.what());
    }
    bucket.work.reset();
  }
  stats.allreduce_wait_s += std::chrono::duration<double>(Clock::now() - start).count();
  ++stats.steps;
}

void DistributedModel::Impl::remove_hooks() {
  for (auto& param : params) {
    if (param.accumulator) param.accumulator->del_post_hook(param.hook_key);
    param.accumulator.reset();
  }
}

DistributedModel::DistributedModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DistributedModel::~DistributedModel() {
  if (impl_) impl_->remove_hooks();
}

void DistributedModel::zero_grad() {
  finish_gradient_sync();
  torch::NoGradGuard no_grad;
  for (auto& bucket : impl_->buckets) bucket.flat[0].zero_();
  if (impl_->group) {
    // A gradient replaced since the last backward: point it back at its view.
    for (auto& param : impl_->params) {
      at::Tensor& grad = param.variable.mutable_grad();
      if (!grad.is_same(param.view)) grad = param.view;
    }
    return;
  }
  for (auto& p : impl_->module->parameters()) {
    if (p.mutable_grad().defined()) p.mutable_grad().zero_();
  }
}

void DistributedModel::finish_gradient_sync() { impl_->finish(); }

void DistributedModel::broadcast_buffers() {
  if (!impl_->group) return;
  auto buffers = impl_->module->buffers();
  if (!buffers.empty()) broadcast_coalesced(*impl_->group, buffers);
}

int DistributedModel::world_size() const { return impl_->group ? impl_->group->getSize() : 1; }

DistributedModel::Stats DistributedModel::stats() const { return impl_->stats; }

namespace {
std::mutex g_registry_mutex;
std::map<const torch::nn::Module*, std::shared_ptr<DistributedModel>> g_registry;
}  // namespace

void keep_freed_memory() {
#ifdef __GLIBC__
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest; also ends its dynamic threshold
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

std::shared_ptr<DistributedModel> prepare_model(torch::nn::Module& module,
                                                const DdpOptions& options) {
  release_model(module);
  if (options.keep_freed_memory) keep_freed_memory();
  auto impl = std::make_unique<DistributedModel::Impl>();
  impl->module = &module;
  impl->group = options.process_group ? options.process_group : default_process_group();
  if (impl->group && impl->group->getSize() == 1) impl->group.reset();
  if (impl->group) {
    std::vector<at::Tensor> state = module.parameters();
    for (const auto& b : module.buffers()) state.push_back(b);
    if (!state.empty()) broadcast_coalesced(*impl->group, state);
    impl->build_buckets(options);
  }
  auto model = std::make_shared<DistributedModel>(std::move(impl));
  std::lock_guard lock(g_registry_mutex);
  g_registry[&module] = model;
  return model;
}

void release_model(torch::nn::Module& module) {
  std::shared_ptr<DistributedModel> released;  // destroyed outside the lock
  std::lock_guard lock(g_registry_mutex);
  if (auto it = g_registry.find(&module); it != g_registry.end()) {
    released = std::move(it->second);
    g_registry.erase(it);
  }
}

namespace detail {
void release_prepared_models() {
  std::map<const torch::nn::Module*, std::shared_ptr<DistributedModel>> released;
  std::lock_guard lock(g_registry_mutex);
  released.swap(g_registry);
}
}  // namespace detail

}  // namespace train
