#include "train/fashion_mnist/trainables.h"

#include "train/checkpoint.h"
#include "train/fashion_mnist/dataset.h"
#include "train/fashion_mnist/models.h"
#include "train/fashion_mnist/training.h"
#include "train/session.h"
#include "train/torch/device.h"
#include "train/torch/process_group.h"
#include "train/trainable.h"

namespace train::fashion_mnist {

namespace {

// The train function behind both trainables.
void train_function(const tune::Config& config, ModelKind kind) {
  use_rank_threads();
  const auto& context = train::get_context();
  const int64_t epochs = config.get<int64_t>("epochs", 10);
  const int64_t batch_size = config.get<int64_t>("batch_size", 128);
  const auto seed = static_cast<uint64_t>(config.get<int64_t>("seed", 0));
  const auto dir = data_dir(config.get<std::string>("data_dir", ""));

  ProcessGroupScope group;
  LoaderOptions train_options{.sampler = {.seed = seed}};
  auto train_loader = prepare_data_loader(
      load(Split::kTrain, dir, config.get<int64_t>("train_subset", 0)), batch_size, train_options);
  LoaderOptions test_options{.sampler = {.shuffle = false}};
  auto test_loader =
      prepare_data_loader(load(Split::kTest, dir, config.get<int64_t>("test_subset", 0)),
                          std::max<int64_t>(batch_size, 1000), test_options);

  torch::manual_seed(seed);
  auto model = make_model(kind, config.get<int64_t>("hidden", 512));
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(config.get<double>("lr", 0.05))
                                  .momentum(config.get<double>("momentum", 0.9))
                                  .weight_decay(config.get<double>("weight_decay", 0.0)));
  int64_t start = 0;
  if (auto checkpoint = train::get_checkpoint()) {
    start = load_checkpoint(checkpoint->path(), *model, optimizer) + 1;
  }
  auto ddp = prepare_model(*model);

  const ReportOptions reduce{.reduce = {{"accuracy", Reduce::kMean}, {"loss", Reduce::kMean}}};
  for (int64_t epoch = start; epoch < epochs; ++epoch) {
    train_loader.set_epoch(epoch);
    EpochResult result = train_epoch(*model, *ddp, optimizer, train_loader);
    double accuracy = evaluate(*model, test_loader);
    std::optional<Checkpoint> checkpoint;
    if (context.world_rank == 0) {
      auto checkpoint_dir = train::make_checkpoint_dir();
      save_checkpoint(checkpoint_dir, *model, optimizer, epoch);
      checkpoint = Checkpoint::from_directory(checkpoint_dir);
    }
    train::report({{"accuracy", accuracy}, {"loss", result.loss}, {"epoch", epoch}}, checkpoint,
                  reduce);
  }
}

}  // namespace

void mlp_trainable(const tune::Config& config) { train_function(config, ModelKind::kMlp); }

void lenet_trainable(const tune::Config& config) { train_function(config, ModelKind::kLeNet); }

}  // namespace train::fashion_mnist
