// The Fashion-MNIST reader on the real files, and checkpoint/resume of the
// training loop the trainables run (train/fashion_mnist/training.h).
#include <doctest/doctest.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "ranks.h"
#include "temp_dir.h"
#include "train/fashion_mnist/dataset.h"
#include "train/fashion_mnist/idx.h"
#include "train/fashion_mnist/training.h"

namespace fm = train::fashion_mnist;
namespace fs = std::filesystem;

using train::testing::temp_dir;

namespace {

bool have_data() {
  if (fm::available(fm::data_dir())) return true;
  MESSAGE("skipped: Fashion-MNIST not found in ", fm::data_dir().string(),
          " (apt-get install dataset-fashion-mnist)");
  return false;
}

}  // namespace

TEST_CASE("the IDX reader reads the Fashion-MNIST files") {
  if (!have_data()) return;
  auto images = fm::read_idx(fm::data_dir() / "train-images-idx3-ubyte.gz");
  CHECK(images.dims == std::vector<int64_t>{60000, 28, 28});
  CHECK(images.values.size() == 60000u * 28 * 28);
  auto labels = fm::read_idx(fm::data_dir() / "t10k-labels-idx1-ubyte.gz");
  CHECK(labels.dims == std::vector<int64_t>{10000});
  CHECK(*std::max_element(labels.values.begin(), labels.values.end()) == 9);

  auto test = fm::load(fm::Split::kTest, fm::data_dir());
  CHECK(test.data.sizes() == torch::IntArrayRef{10000, 1, 28, 28});
  CHECK(test.target.dtype() == torch::kLong);
  CHECK(std::abs(test.data.mean().item<double>()) < 0.05);  // normalised
  CHECK(fm::load(fm::Split::kTrain, fm::data_dir(), 100).size() == 100);
}

TEST_CASE("the IDX reader rejects a missing, foreign or truncated file") {
  auto dir = temp_dir("idx");
  CHECK_THROWS_AS(fm::read_idx(dir / "missing.gz"), fm::DataError);
  std::ofstream(dir / "foreign") << "not an idx file";
  CHECK_THROWS_AS(fm::read_idx(dir / "foreign"), fm::DataError);
  std::ofstream(dir / "short", std::ios::binary) << std::string(
      "\0\0\x08\x01\0\0\0\x10"
      "abc",
      11);  // 16 values promised, 3 given
  CHECK_THROWS_WITH_AS(fm::read_idx(dir / "short"), doctest::Contains("truncated"), fm::DataError);
  fs::remove_all(dir);
}

TEST_CASE("a run resumed from the epoch-2 checkpoint equals an uninterrupted one") {
  if (!have_data()) return;
  torch::set_num_threads(1);
  auto data = fm::load(fm::Split::kTrain, fm::data_dir(), 1024);
  auto dir = temp_dir("resume");
  constexpr int64_t kEpochs = 4;

  // Each rank: builds a model (seeded differently, to show that the loaded
  // state wins), optionally loads the checkpoint, trains epochs [from, to).
  auto run = [&](int64_t from, int64_t to, bool save_after, bool load) {
    std::vector<std::vector<torch::Tensor>> params(2);
    train::testing::run_ranks(2, [&](int rank, auto group) {
      // Ranks are threads sharing libtorch's global generator: seed and draw
      // the initial weights one rank at a time, or they depend on the
      // interleaving and two runs differ before any training.
      static std::mutex init;
      std::unique_lock lock(init);
      torch::manual_seed(load ? 99 : 0);
      auto model = fm::make_model(fm::ModelKind::kMlp, 64);
      lock.unlock();
      torch::optim::SGD optimizer(model->parameters(),
                                  torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4));
      if (load) CHECK(fm::load_checkpoint(dir, *model, optimizer) == from - 1);
      auto ddp = train::prepare_model(*model, {.process_group = group});
      auto loader = train::prepare_data_loader(
          data, 64, {.sampler = {.rank = rank, .num_replicas = 2, .seed = 3}});
      for (int64_t epoch = from; epoch < to; ++epoch) {
        loader.set_epoch(epoch);
        fm::train_epoch(*model, *ddp, optimizer, loader);
      }
      if (save_after && rank == 0) fm::save_checkpoint(dir, *model, optimizer, to - 1);
      for (auto& p : model->parameters()) params[rank].push_back(p.detach().clone());
      train::release_model(*model);
    });
    return params;
  };

  auto uninterrupted = run(0, kEpochs, false, false);
  run(0, 2, true, false);  // "killed" after epoch 2 (epochs 0 and 1 done)
  auto resumed = run(2, kEpochs, false, true);
  for (int rank = 0; rank < 2; ++rank) {
    REQUIRE(resumed[rank].size() == uninterrupted[rank].size());
    for (size_t i = 0; i < resumed[rank].size(); ++i) {
      CHECK_MESSAGE(torch::allclose(resumed[rank][i], uninterrupted[rank][i], 0.0, 1e-6),
                    "max abs difference "
                        << (resumed[rank][i] - uninterrupted[rank][i]).abs().max().item<double>());
    }
  }
  fs::remove_all(dir);
}
