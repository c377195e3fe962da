#include "tune/spec_validation.h"

#include <string_view>

#include "core/errors.h"

namespace tune {
namespace {

// One rule: a field (by its sweep-file key), how to read it, when it is valid.
template <class From>
struct Field {
  std::string_view key;
  double (*get)(const From&);
  bool (*valid)(double);
  std::string_view rule;
};

constexpr Field<Resources> kResourceFields[] = {
    {"num_workers", [](const Resources& r) -> double { return r.num_workers; },
     [](double v) { return v >= 1 && v <= 1024; }, "must be between 1 and 1024"},
    {"cpus_per_worker", [](const Resources& r) { return r.cpus_per_worker; },
     [](double v) { return v > 0; }, "must be > 0"},
    {"gpus_per_worker", [](const Resources& r) -> double { return r.gpus_per_worker; },
     [](double v) { return v >= 0 && v <= 64; }, "must be a whole number from 0 to 64"},
    {"threads_per_worker", [](const Resources& r) -> double { return r.threads_per_worker; },
     [](double v) { return v >= 0 && v <= 1024; },
     "must be between 1 and 1024 (or 0: one per CPU of the worker)"},
};

constexpr Field<ExperimentSpec> kSpecFields[] = {
    {"num_samples", [](const ExperimentSpec& s) -> double { return s.num_samples; },
     [](double v) { return v >= 1 || v == -1; },
     "must be at least 1 (or -1: until a stopper ends the experiment)"},
    {"max_concurrent_trials",
     [](const ExperimentSpec& s) -> double { return s.max_concurrent_trials; },
     [](double v) { return v >= 0; }, "must be >= 0 (0: no limit)"},
    {"resources.cpus", [](const ExperimentSpec& s) { return s.total_cpus; },
     [](double v) { return v >= 0; }, "must be > 0 (or 0: every core)"},
    {"resources.gpus", [](const ExperimentSpec& s) -> double { return s.total_gpus; },
     [](double v) { return v >= -1; }, "must be >= 0"},
    {"failure.heartbeat_timeout_s", [](const ExperimentSpec& s) { return s.heartbeat_timeout_s; },
     [](double v) { return v > 0; }, "must be > 0"},
    {"failure.max_failures", [](const ExperimentSpec& s) -> double { return s.max_failures; },
     [](double v) { return v >= -1; }, "must be >= 0, or -1 for unlimited"},
    {"checkpoint.num_to_keep", [](const ExperimentSpec& s) -> double { return s.num_to_keep; },
     [](double v) { return v >= 0; }, "must be >= 1 (or 0: keep all)"},
};

template <class From, size_t N>
void check(const Field<From> (&fields)[N], const From& from, const std::string& prefix) {
  for (const auto& field : fields) {
    if (field.valid(field.get(from))) continue;
    const std::string key =
        prefix.empty() ? std::string(field.key) : prefix + "." + std::string(field.key);
    throw ConfigError(std::string(field.rule), {}, 0, key);
  }
}

}  // namespace

void validate_resources(const Resources& resources, const std::string& prefix) {
  check(kResourceFields, resources, prefix);
}

void validate_spec(const ExperimentSpec& spec) {
  if (spec.name.empty()) throw ConfigError("the experiment has no name", {}, 0, "name");
  if (spec.trainable.name.empty() && spec.trainable.command.empty()) {
    throw ConfigError("the trainable has no name", {}, 0, "trainable");
  }
  validate_resources(spec.trainable, "trainable");
  check(kSpecFields, spec, "");
}

}  // namespace tune
