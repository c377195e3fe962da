#include "train/torch/ddp.h"

#include <doctest/doctest.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <mutex>
#include <string>
#include <vector>

#include "ranks.h"

namespace {

// Several small parameters, so that tiny buckets split them.
struct SmallNet : torch::nn::Module {
  SmallNet() {
    fc1 = register_module("fc1", torch::nn::Linear(10, 16));
    fc2 = register_module("fc2", torch::nn::Linear(16, 8));
    fc3 = register_module("fc3", torch::nn::Linear(8, 3));
    unused = register_parameter("unused", torch::ones({4}));
  }
  torch::Tensor forward(torch::Tensor x) { return fc3(torch::relu(fc2(torch::relu(fc1(x))))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  torch::Tensor unused;  // takes no part in forward: its bucket must still go
};

constexpr int64_t kBatch = 8;  // per rank
constexpr int kSteps = 5;
constexpr int kMaxWorld = 4;

struct Data {
  torch::Tensor x, y;
};

Data make_data() {
  torch::manual_seed(123);
  return {torch::randn({kMaxWorld * kBatch * kSteps, 10}),
          torch::randint(0, 3, {kMaxWorld * kBatch * kSteps})};
}

std::vector<torch::Tensor> snapshot(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

double max_diff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

// Trains `steps` SGD steps with momentum; step i takes rows
// [offset + i * stride, +batch).
void train(SmallNet& net, train::DistributedModel& ddp, const Data& data, int64_t offset,
           int64_t stride, int64_t batch, bool set_grads_to_none = false) {
  torch::optim::SGD opt(net.parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int i = 0; i < kSteps; ++i) {
    if (set_grads_to_none) {
      for (auto& p : net.parameters()) p.mutable_grad() = torch::Tensor();
    } else {
      ddp.zero_grad();
    }
    auto rows = torch::arange(offset + i * stride, offset + i * stride + batch);
    auto loss = torch::nn::functional::cross_entropy(net.forward(data.x.index_select(0, rows)),
                                                     data.y.index_select(0, rows));
    loss.backward();
    opt.step();
  }
}

// One rank with the whole batch of `world_size` ranks.
std::vector<torch::Tensor> single_rank_reference(const Data& data, int world_size) {
  torch::manual_seed(1);  // rank 0's initial weights, which DDP broadcasts
  SmallNet net;
  auto ddp = train::prepare_model(net);  // no group: a no-op wrapper
  CHECK(ddp->world_size() == 1);
  train(net, *ddp, data, 0, world_size * kBatch, world_size * kBatch);
  train::release_model(net);
  return snapshot(net);
}

// `world_size` ranks with batch kBatch each against one rank with all of it;
// rank r runs on host hosts[r] (empty: all on this one).
std::vector<train::DistributedModel::Stats> check_equivalence(train::DdpOptions base,
                                                              bool set_grads_to_none,
                                                              int world_size = 2,
                                                              std::vector<std::string> hosts = {}) {
  torch::set_num_threads(1);
  Data data = make_data();
  auto reference = single_rank_reference(data, world_size);
  std::vector<std::vector<torch::Tensor>> result(world_size);
  std::vector<train::DistributedModel::Stats> stats(world_size);
  train::testing::run_ranks(world_size, [&](int rank, auto group) {
    // Ranks are threads sharing libtorch's global generator: draw one rank at
    // a time, so rank 0's weights are exactly the reference's (seed 1).
    static std::mutex init;
    std::unique_lock lock(init);
    torch::manual_seed(rank + 1);  // different initial weights: the broadcast must fix them
    SmallNet net;
    lock.unlock();
    train::DdpOptions options = base;
    options.process_group = group;
    if (!hosts.empty()) options.host = hosts[rank];
    auto ddp = train::prepare_model(net, options);
    train(net, *ddp, data, rank * kBatch, world_size * kBatch, kBatch, set_grads_to_none);
    result[rank] = snapshot(net);
    stats[rank] = ddp->stats();
    train::release_model(net);
  });
  for (int rank = 0; rank < world_size; ++rank) {
    CHECK(max_diff(result[rank], reference) < 1e-5);
    CHECK(max_diff(result[rank], result[0]) == 0.0);
    CHECK(stats[rank].steps == kSteps);
  }
  return stats;
}

}  // namespace

TEST_CASE("2-rank DDP with batch B per rank equals 1 rank with batch 2B") {
  auto stats = check_equivalence({}, false);  // ranks on one host: through shared memory
  CHECK(stats[0].shared_memory);
  CHECK(stats[0].nodes == 1);
}

TEST_CASE("4 ranks on two hosts average hierarchically and equal 1 rank with batch 4B") {
  auto stats = check_equivalence({}, false, 4, {"hostA", "hostA", "hostB", "hostB"});
  for (const auto& s : stats) {
    CHECK(s.shared_memory);  // on each host; across hosts through the leaders' group
    CHECK(s.nodes == 2);
  }
  // Interleaved and uneven: host A runs ranks 0 and 2, host B ranks 1 and 3;
  // then 2 ranks on one host and 1 on the other.
  check_equivalence({}, false, 4, {"hostA", "hostB", "hostA", "hostB"});
  stats = check_equivalence({}, true, 3, {"hostA", "hostA", "hostB"});
  CHECK(stats[2].shared_memory);
  CHECK(stats[2].nodes == 2);
}

TEST_CASE("one rank per host averages through the process group, overlapping backward") {
  auto stats = check_equivalence({.bucket_cap_bytes = 256, .first_bucket_bytes = 64}, false, 2,
                                 {"hostA", "hostB"});
  CHECK_FALSE(stats[0].shared_memory);
  CHECK(stats[0].nodes == 2);
  CHECK(stats[0].buckets > 1);
}

TEST_CASE("2-rank DDP through the process group equals 1 rank with batch 2B") {
  CHECK_FALSE(check_equivalence({.shared_memory = false}, false)[0].shared_memory);
}

TEST_CASE("DDP equivalence holds with one bucket per parameter") {
  check_equivalence({.bucket_cap_bytes = 1, .first_bucket_bytes = 1, .shared_memory = false},
                    false);
}

TEST_CASE("gradients set to none between steps are still averaged") {
  check_equivalence({.bucket_cap_bytes = 256, .first_bucket_bytes = 64, .shared_memory = false},
                    true);
  check_equivalence({}, true);
}

TEST_CASE("prepare_model broadcasts rank 0's parameters") {
  torch::set_num_threads(1);
  std::vector<std::vector<torch::Tensor>> result(2);
  train::testing::run_ranks(2, [&](int rank, auto group) {
    torch::manual_seed(rank + 7);
    SmallNet net;
    auto ddp = train::prepare_model(net, {.process_group = group});
    CHECK(ddp->world_size() == 2);
    CHECK(ddp->stats().buckets >= 1);
    result[rank] = snapshot(net);
    train::release_model(net);
  });
  CHECK(max_diff(result[0], result[1]) == 0.0);
}

// Buffers of the types Gloo cannot send itself, beside a float parameter.
struct MaskedNet : torch::nn::Module {
  explicit MaskedNet(int rank) {
    fc = register_module("fc", torch::nn::Linear(4, 4));
    mask = register_buffer("mask", torch::rand({5, 5}) > 0.5);
    scale = register_buffer("scale", torch::randn({3}).to(torch::kBFloat16));
    counts = register_buffer("counts", torch::full({2}, 100 * rank - 7, torch::kShort));
  }
  torch::nn::Linear fc{nullptr};
  torch::Tensor mask, scale, counts;
};

TEST_CASE("bool, bfloat16 and int16 buffers reach every rank exactly, in their own type") {
  torch::set_num_threads(1);
  std::vector<std::vector<torch::Tensor>> at_prepare(2), at_broadcast(2);
  train::testing::run_ranks(2, [&](int rank, auto group) {
    torch::manual_seed(rank + 11);  // different masks and scales on each rank
    auto net = std::make_shared<MaskedNet>(rank);
    auto ddp = train::prepare_model(*net, {.process_group = group});
    for (auto& b : net->buffers()) at_prepare[rank].push_back(b.clone());
    // Rank 1 changes its buffers; broadcast_buffers restores rank 0's.
    if (rank == 1) {
      torch::NoGradGuard no_grad;
      net->mask.logical_not_();
      net->scale.mul_(3);
      net->counts.add_(1);
    }
    ddp->broadcast_buffers();
    for (auto& b : net->buffers()) at_broadcast[rank].push_back(b.clone());
    train::release_model(*net);
  });
  for (const auto* buffers : {&at_prepare, &at_broadcast}) {
    REQUIRE((*buffers)[0].size() == 3);
    CHECK(((*buffers)[1][0].scalar_type() == torch::kBool));
    CHECK(((*buffers)[1][1].scalar_type() == torch::kBFloat16));
    CHECK(((*buffers)[1][2].scalar_type() == torch::kShort));
    for (size_t i = 0; i < 3; ++i) CHECK(torch::equal((*buffers)[0][i], (*buffers)[1][i]));
  }
  CHECK(at_prepare[1][2][0].item<int64_t>() == -7);  // rank 0's value, not rank 1's 93
}

TEST_CASE("zero_grad zeroes the gradients in place") {
  torch::set_num_threads(1);
  for (bool shared_memory : {true, false}) {
    train::testing::run_ranks(2, [&](int rank, auto group) {
      SmallNet net;
      auto ddp =
          train::prepare_model(net, {.process_group = group, .shared_memory = shared_memory});
      net.forward(torch::randn({4, 10})).sum().backward();
      auto grad = net.fc1->weight.grad();
      ddp->zero_grad();
      CHECK(grad.is_same(net.fc1->weight.grad()));
      CHECK(net.fc1->weight.grad().abs().sum().item<double>() == 0.0);
      train::release_model(net);
    });
  }
}

TEST_CASE("a channels-last weight's averaged gradient keeps the weight's layout") {
  torch::set_num_threads(1);
  for (bool shared_memory : {true, false}) {
    train::testing::run_ranks(2, [&](int rank, auto group) {
      torch::nn::Conv2d conv(torch::nn::Conv2dOptions(8, 8, 3).bias(false));
      auto& weight = conv->weight;
      weight.set_data(weight.contiguous(at::MemoryFormat::ChannelsLast));
      auto ddp =
          train::prepare_model(*conv, {.process_group = group, .shared_memory = shared_memory});
      // Each weight's gradient of the sum over a constant input c: c times
      // 2 images x 3 x 3 outputs; ranks feed c = 1 and 2, so the mean is 27.
      auto x = torch::full({2, 8, 5, 5}, rank + 1.0).contiguous(at::MemoryFormat::ChannelsLast);
      conv->forward(x).sum().backward();
      CHECK(weight.grad().is_contiguous(at::MemoryFormat::ChannelsLast));
      CHECK(weight.grad().allclose(torch::full_like(weight, 27.0)));
      train::release_model(*conv);
    });
  }
}

TEST_CASE("gradients in shared memory stay valid after release_model") {
  torch::set_num_threads(1);
  std::vector<torch::Tensor> grads(2);
  train::testing::run_ranks(2, [&](int rank, auto group) {
    SmallNet net;
    auto ddp = train::prepare_model(net, {.process_group = group});
    CHECK(ddp->stats().shared_memory);
    net.forward(torch::full({4, 10}, rank + 1.0)).sum().backward();
    train::release_model(net);
    ddp.reset();
    grads[rank] = net.fc1->weight.grad();
  });
  // The segment is unmapped only with the last gradient viewing it.
  CHECK(max_diff({grads[0]}, {grads[1]}) == 0.0);
  CHECK(grads[0].abs().sum().item<double>() > 0.0);
}
