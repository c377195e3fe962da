#include "train/torch/process_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <arpa/inet.h>

#include <algorithm>
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

bool is_loopback(const std::string& address) {
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return address == "localhost" || address == "::1";
}

std::shared_ptr<::gloo::transport::Device> gloo_device(const ProcessGroupOptions& options) {
  if (!options.gloo_hostname.empty()) {
    return c10d::ProcessGroupGloo::createDeviceForHostname(options.gloo_hostname);
  }
  std::string interface = env_or("GLOO_SOCKET_IFNAME", "");
  if (!interface.empty()) return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  std::string master = env_or("MASTER_ADDR", "");
  if (master.empty() || is_loopback(master)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// What new_group needs of a group made here: its store and options. Weak on
// the group, so a record outlives it only until the next prune.
struct GroupRecord {
  c10::weak_intrusive_ptr<c10d::ProcessGroup> group;
  c10::intrusive_ptr<c10d::Store> store;
  ProcessGroupOptions options;
  int subgroups = 0;  // made from it so far: names each one's key prefix
};

std::mutex g_records_mutex;
std::vector<GroupRecord> g_records;

// Callers hold g_records_mutex.
void prune_records() {
  std::erase_if(g_records, [](const GroupRecord& r) { return r.group.expired(); });
}

// Callers hold g_records_mutex.
std::vector<GroupRecord>::iterator find_record(
    const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
  return std::find_if(g_records.begin(), g_records.end(),
                      [&](const GroupRecord& r) { return r.group.lock().get() == group.get(); });
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
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  try {
    // Our own join first: Gloo's connect waits with the collective timeout,
    // so a missing peer would otherwise take `timeout`, not the rendezvous's.
    if (store->add("tunerun_joined", 1) == world_size) store->set("tunerun_all_joined", {1});
    store->wait({"tunerun_all_joined"}, options.rendezvous_timeout);
    if (options.backend == Backend::kNccl) {
#ifdef USE_C10D_NCCL
      auto nccl = c10d::ProcessGroupNCCL::Options::create();
      nccl->timeout = options.timeout;
      group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, nccl);
#else
      throw ProcessGroupError(
          "backend nccl is not available: this libtorch was built without CUDA/NCCL");
#endif
    } else {
      auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
      gloo->threads = options.gloo_threads;
      gloo->devices = {gloo_device(options)};
      group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, gloo);
    }
  } catch (const ProcessGroupError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProcessGroupError("rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
                            " could not join its process group: " + e.what());
  }
  std::lock_guard lock(g_records_mutex);
  prune_records();
  g_records.push_back({.group = c10::weak_intrusive_ptr<c10d::ProcessGroup>(group),
                       .store = store,
                       .options = options});
  return group;
}

c10::intrusive_ptr<c10d::ProcessGroup> new_group(
    const c10::intrusive_ptr<c10d::ProcessGroup>& group, const std::vector<int>& ranks) {
  const int size = group->getSize();
  if (ranks.empty() || !std::is_sorted(ranks.begin(), ranks.end()) ||
      std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end() || ranks.front() < 0 ||
      ranks.back() >= size) {
    throw ProcessGroupError("new_group: the ranks must be distinct, ascending and below " +
                            std::to_string(size));
  }
  c10::intrusive_ptr<c10d::Store> store;
  ProcessGroupOptions options;
  int index = 0;
  {
    std::lock_guard lock(g_records_mutex);
    auto it = find_record(group);
    if (it == g_records.end()) {
      throw ProcessGroupError("new_group: the parent group was not made by new_process_group");
    }
    store = it->store;
    options = it->options;
    index = it->subgroups++;
  }
  auto member = std::find(ranks.begin(), ranks.end(), group->getRank());
  if (member == ranks.end()) return {};
  return new_process_group(
      c10::make_intrusive<c10d::PrefixStore>("subgroup" + std::to_string(index), store),
      static_cast<int>(member - ranks.begin()), static_cast<int>(ranks.size()), options);
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
  {
    std::lock_guard lock(g_mutex);
    g_group.reset();
    g_store.reset();
  }
  std::lock_guard lock(g_records_mutex);
  prune_records();  // the store of a group that is gone closes now, not at the next group
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

bool has_store(const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
  std::lock_guard lock(g_records_mutex);
  return find_record(group) != g_records.end();
}
}  // namespace detail

}  // namespace train
