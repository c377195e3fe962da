// A trainable library as a user would build one: it links none of tunerun's
// libraries; train::report resolves against the tunerun executable.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "train/session.h"
#include "train/trainable.h"

namespace {

void append_line(const std::string& path, long long value) {
  std::ofstream(path, std::ios::app) << value << std::endl;  // flushed: survives a SIGKILL
}

// Reports `iterations` times (a checkpoint every `checkpoint_every`, if set)
// and keeps two files per rank in its trial directory: computed_RANK (each
// iteration it computes) and on_disk_RANK (each iteration report()'s
// contract says is on disk once report() returns: this one if it carried a
// checkpoint; else, with `each_report_decided` (the experiment grants no
// lease), the one before).
void counted(const tune::Config& config) {
  const auto& context = train::get_context();
  const std::string dir = context.trial_dir + "/";
  const std::string rank = std::to_string(context.world_rank);
  const long long iterations = config.get<long long>("iterations", 10);
  const long long checkpoint_every = config.get<long long>("checkpoint_every", 0);
  const bool each_report_decided = config.get<bool>("each_report_decided", false);
  for (long long t = 1; t <= iterations; ++t) {
    append_line(dir + "computed_" + rank, t);
    const bool checkpoint = checkpoint_every > 0 && t % checkpoint_every == 0;
    if (checkpoint) {
      auto scratch = train::make_checkpoint_dir();
      std::ofstream(scratch / "t") << t;
      train::report({{"t", t}}, train::Checkpoint::from_directory(scratch));
    } else {
      train::report({{"t", t}});
    }
    if (checkpoint || each_report_decided) {
      append_line(dir + "on_disk_" + rank, checkpoint ? t : t - 1);
    }
  }
}

// Writes its pid to `started` in its trial directory, then reports
// `iterations` times {t, pid}, `sleep_ms` before each report, and returns
// `linger_ms` after the last one. With `crash_on` equal to its config's x,
// its first attempt exits with status 3 after the first report.
void handed(const tune::Config& config) {
  const auto& context = train::get_context();
  std::ofstream(context.trial_dir + "/started") << getpid() << std::endl;
  const long long iterations = config.get<long long>("iterations", 1);
  const auto sleep = std::chrono::milliseconds(config.get<long long>("sleep_ms", 0));
  const bool crash = context.attempt == 0 &&
                     config.get<long long>("crash_on", -1) == config.get<long long>("x", 0);
  for (long long t = 1; t <= iterations; ++t) {
    std::this_thread::sleep_for(sleep);  // the step's work, as long as the case asks
    train::report({{"t", t}, {"pid", static_cast<long long>(getpid())}});
    if (crash) std::_Exit(3);
  }
  // Still running after its last report, as long as the case asks.
  std::this_thread::sleep_for(std::chrono::milliseconds(config.get<long long>("linger_ms", 0)));
}

}  // namespace

extern "C" void tunerun_register_trainables() {
  train::register_trainable("plugin_square", [](const tune::Config& config) {
    const double x = config.get<double>("x");
    train::report({{"loss", x * x}, {"rank", train::get_context().world_rank}});
  });
  train::register_trainable("plugin_counted", counted);
  train::register_trainable("plugin_handed", handed);
}
