// A 4-trial sweep of 2-rank trials from a program built against an installed
// tunerun: its ranks are this same program, started again by Tuner::fit().
//
//   consumer STORAGE_PATH
//
// Prints one line per trial ("trial ID STATUS ranks=N world_size=N") and a
// summary; exits 0 when every trial ended TERMINATED.
#include <fmt/format.h>
#include <tunerun/train/session.h>
#include <tunerun/tune/tuner.h>

namespace {

void train_func(const tune::Config& config) {
  const double x = config.get<double>("x");
  const int world_size = train::get_context().world_size;
  for (int step = 1; step <= 3; ++step) {
    // `ranks` sums a 1 from every rank: 2 says both ranks reported.
    train::report(
        {{"loss", (x - 3) * (x - 3) + 1.0 / step}, {"ranks", 1}, {"world_size", world_size}},
        std::nullopt, {.reduce = {{"ranks", train::Reduce::kSum}}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: consumer STORAGE_PATH\n");
    return 2;
  }
  tune::Trainable trainable{
      .name = "consumer", .func = train_func, .num_workers = 2, .cpus_per_worker = 0.5};
  tune::TuneConfig cfg{.metric = "loss",
                       .mode = tune::Mode::kMin,
                       .num_samples = 4,
                       .scheduler = tune::schedulers::asha({.max_t = 3}),
                       .seed = 1};
  tune::RunConfig run{.name = "consumer", .storage_path = argv[1], .verbosity = 0};
  const tune::ResultGrid results =
      tune::Tuner(trainable, {{"x", tune::uniform(0, 6)}}, cfg, run).fit();

  int terminated = 0;
  for (const tune::Result& r : results) {
    fmt::print("trial {} {} ranks={} world_size={}\n", r.trial_id, tune::to_string(r.status),
               r.metrics.value("ranks", 0), r.metrics.value("world_size", 0));
    terminated += r.status == tune::TrialStatus::kTerminated;
  }
  fmt::print("{} trials, {} TERMINATED, best x={:.3f}\n", results.size(), terminated,
             results.get_best_result().config["x"].get<double>());
  return terminated == 4 ? 0 : 1;
}
