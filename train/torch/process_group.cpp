#include "train/torch/process_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <mutex>

namespace train {
namespace detail {
void release_prepared_models();  // ddp.cpp
}  // namespace detail

namespace {

std::mutex g_mutex;
c10::intrusive_ptr<c10d::Store> g_store;
c10::intrusive_ptr<c10d::ProcessGroup> g_group;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

int env_int(const char* name, int fallback) {
  std::string value = env_or(name, "");
  if (value.empty()) return fallback;
  try {
    size_t used = 0;
    int parsed = std::stoi(value, &used);
    if (used == value.size()) return parsed;
  } catch (const std::exception&) {
  }
  throw ProcessGroupError(std::string("environment variable ") + name + "='" + value +
                          "' is not an integer");
}

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> new_process_group(c10::intrusive_ptr<c10d::Store> store,
                                                         int rank, int world_size,
                                                         const ProcessGroupOptions& options) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw ProcessGroupError("invalid rank " + std::to_string(rank) + " of world size " +
                            std::to_string(world_size));
  }
  store->setTimeout(options.rendezvous_timeout);
  try {
    // Our own join first: Gloo's connect waits with the collective timeout,
    // so a missing peer would otherwise take `timeout`, not the rendezvous's.
    if (store->add("tunerun_joined", 1) == world_size) store->set("tunerun_all_joined", {1});
    store->wait({"tunerun_all_joined"}, options.rendezvous_timeout);
    if (options.backend == Backend::kNccl) {
#ifdef USE_C10D_NCCL
      auto nccl = c10d::ProcessGroupNCCL::Options::create();
      nccl->timeout = options.timeout;
      return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, nccl);
#else
      throw ProcessGroupError(
          "backend nccl is not available: this libtorch was built without CUDA/NCCL");
#endif
    }
    auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
    gloo->threads = options.gloo_threads;
    gloo->devices = {c10d::ProcessGroupGloo::createDeviceForHostname(options.gloo_hostname)};
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, gloo);
  } catch (const ProcessGroupError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProcessGroupError("rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
                            " could not join its process group: " + e.what());
  }
}

c10::intrusive_ptr<c10d::ProcessGroup> init_process_group(const ProcessGroupOptions& options) {
  std::lock_guard lock(g_mutex);
  if (g_group) throw ProcessGroupError("init_process_group: a default process group exists");
  int world_size = env_int("WORLD_SIZE", 1);
  int rank = env_int("RANK", 0);
  if (world_size <= 1) return {};
  std::string addr = env_or("MASTER_ADDR", "127.0.0.1");
  int port = env_int("MASTER_PORT", -1);
  if (port <= 0 || port > 65535) {
    throw ProcessGroupError("init_process_group: MASTER_PORT is unset or invalid");
  }
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(port);
  store_options.isServer = rank == 0;
  store_options.numWorkers = world_size;
  store_options.waitWorkers = false;  // the group's own rendezvous waits, with its timeout
  store_options.timeout = options.rendezvous_timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(addr, store_options);
  } catch (const std::exception& e) {
    throw ProcessGroupError("rank " + std::to_string(rank) + ": c10d store at " + addr + ":" +
                            std::to_string(port) + " unreachable: " + e.what());
  }
  g_group = new_process_group(c10::make_intrusive<c10d::PrefixStore>("tunerun", store), rank,
                              world_size, options);
  g_store = store;
  return g_group;
}

c10::intrusive_ptr<c10d::ProcessGroup> default_process_group() {
  std::lock_guard lock(g_mutex);
  return g_group;
}

void destroy_process_group() {
  detail::release_prepared_models();
  std::lock_guard lock(g_mutex);
  g_group.reset();
  g_store.reset();
}

void barrier(const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
  if (!group) return;
  try {
    group->barrier()->wait();
  } catch (const std::exception& e) {
    throw ProcessGroupError(std::string("barrier failed: ") + e.what());
  }
}

namespace detail {
std::pair<int, int> rank_and_world_size() {
  if (auto group = default_process_group()) return {group->getRank(), group->getSize()};
  return {env_int("RANK", 0), env_int("WORLD_SIZE", 1)};
}
}  // namespace detail

}  // namespace train
