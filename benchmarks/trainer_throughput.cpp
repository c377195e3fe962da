// What the Trainer costs: samples/s of train::Trainer against the
// hand-written loop of train/fashion_mnist (training.h's train_epoch, what
// the fashion_mnist_* trainables run) on the same model, data, batch,
// optimizer (SGD with momentum) and threads, one rank, measured in the same
// run. The runs alternate (hand, Trainer, hand, Trainer...) so that load
// from other processes hits both alike; each side keeps its median epoch.
//
//   trainer_throughput [--model lenet|mlp|resnet] [--samples N] [--batch N] [--repeat N]
//                      [--threads N]
//
// Prints one line per epoch (raw numbers), then the ratio Trainer / hand
// (goal: >= 0.97), and the Trainer with its defaults on (gradient clipping to
// norm 1, a cosine schedule), which the hand-written loop does not do.
#include <fmt/core.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "train/fashion_mnist/dataset.h"
#include "train/fashion_mnist/models.h"
#include "train/fashion_mnist/training.h"
#include "train/loop/trainer.h"
#include "train/models/resnet.h"
#include "train/torch/ddp.h"

namespace fm = train::fashion_mnist;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string model = "lenet";
  int64_t samples = 12800;  // per epoch
  int64_t batch = 128;
  int repeat = 5;  // epochs per side
  int threads = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    std::string v = i + 1 < argc ? argv[i + 1] : "";
    if (k == "--model")
      a.model = v;
    else if (k == "--samples")
      a.samples = std::stoll(v);
    else if (k == "--batch")
      a.batch = std::stoll(v);
    else if (k == "--repeat")
      a.repeat = std::stoi(v);
    else if (k == "--threads")
      a.threads = std::stoi(v);
    else {
      fmt::print(stderr, "unknown option {}\n", k);
      std::exit(2);
    }
    ++i;
  }
  return a;
}

std::shared_ptr<fm::Net> make_net(const std::string& model) {
  torch::manual_seed(0);
  if (model == "mlp") return fm::make_model(fm::ModelKind::kMlp);
  if (model == "lenet") return fm::make_model(fm::ModelKind::kLeNet);
  struct ResNetNet : fm::Net {
    ResNetNet() { net = register_module("net", std::make_shared<train::models::ResNet>()); }
    torch::Tensor forward(torch::Tensor x) override { return net->forward(x); }
    std::shared_ptr<train::models::ResNet> net;
  };
  if (model == "resnet") return std::make_shared<ResNetNet>();
  fmt::print(stderr, "unknown model {}\n", model);
  std::exit(2);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  torch::set_num_threads(args.threads);
  const auto dir = fm::data_dir();
  if (!fm::available(dir)) {
    fmt::print(stderr, "Fashion-MNIST not found in {} (apt-get install dataset-fashion-mnist)\n",
               dir.string());
    return 2;
  }
  const auto data = fm::load(fm::Split::kTrain, dir, args.samples);
  constexpr double kLr = 0.05, kMomentum = 0.9;

  // The hand-written loop, as the fashion_mnist trainables run it.
  auto hand_net = make_net(args.model);
  torch::optim::SGD sgd(hand_net->parameters(), torch::optim::SGDOptions(kLr).momentum(kMomentum));
  auto ddp = train::prepare_model(*hand_net);
  train::LoaderOptions options{.sampler = {.rank = 0, .num_replicas = 1, .seed = 0}};
  auto loader = train::prepare_data_loader(data, args.batch, options);
  int64_t hand_epoch = 0;
  auto hand = [&] {
    loader.set_epoch(hand_epoch++);
    auto start = Clock::now();
    auto result = fm::train_epoch(*hand_net, *ddp, sgd, loader);
    return static_cast<double>(result.samples) /
           std::chrono::duration<double>(Clock::now() - start).count();
  };

  // The Trainer, configured as that loop: SGD, constant rate, no clipping.
  auto trainer_epoch = [&](train::TrainingArguments targs) {
    auto net = make_net(args.model);
    targs.num_train_epochs = 1;
    targs.per_device_train_batch_size = args.batch;
    targs.optim = train::OptimizerKind::kSgd;
    targs.sgd_momentum = kMomentum;
    targs.learning_rate = kLr;
    targs.save_strategy = train::Interval::kNo;
    targs.logging_strategy = train::Interval::kNo;
    train::Trainer trainer(net, targs, data);
    auto start = Clock::now();
    trainer.train();
    return static_cast<double>(data.size()) /
           std::chrono::duration<double>(Clock::now() - start).count();
  };
  const train::TrainingArguments plain{.lr_scheduler = train::LrSchedule::kConstant,
                                       .max_grad_norm = 0.0};
  const train::TrainingArguments defaults{.lr_scheduler = train::LrSchedule::kCosine,
                                          .warmup_ratio = 0.05};

  fmt::print("model {}, {} samples per epoch, batch {}, {} thread(s), 1 rank\n", args.model,
             data.size(), args.batch, args.threads);
  hand();  // warm-up: allocator, caches
  trainer_epoch(plain);
  std::vector<double> hand_rates, trainer_rates, default_rates;
  for (int r = 0; r < args.repeat; ++r) {
    hand_rates.push_back(hand());
    trainer_rates.push_back(trainer_epoch(plain));
    default_rates.push_back(trainer_epoch(defaults));
    fmt::print(
        "epoch {}: hand-written {:.0f} samples/s, Trainer {:.0f}, Trainer+clip+cosine {:.0f}\n", r,
        hand_rates.back(), trainer_rates.back(), default_rates.back());
  }
  const double h = median(hand_rates), t = median(trainer_rates), d = median(default_rates);
  fmt::print("median samples/s: hand-written {:.0f}, Trainer {:.0f}, Trainer+clip+cosine {:.0f}\n",
             h, t, d);
  fmt::print("ratio Trainer / hand-written: {:.3f} (goal >= 0.97)\n", t / h);
  fmt::print("ratio Trainer+clip+cosine / hand-written: {:.3f}\n", d / h);
  return 0;
}
