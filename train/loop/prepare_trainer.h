// train::prepare_trainer, as Ray Train's for Hugging Face: makes a Trainer
// data-parallel over the trial's ranks.
//
//   trainer = train::prepare_trainer(std::move(trainer));
//
// The model is wrapped by train::prepare_model (rank 0's weights broadcast,
// gradients averaged: through shared memory between ranks on one host, the
// group's backend, Gloo or NCCL, across), each rank reads its shard of the
// data (DistributedSampler with the epoch set every epoch), evaluation
// metrics and logged losses are averaged over ranks, and only rank 0 writes
// the model and optimizer into checkpoints. So N ranks with batch b train as
// one rank with batch N*b.
#pragma once

#include "train/loop/trainer.h"
#include "train/torch/process_group.h"

namespace train {

// `group` defaults to the trial's default process group
// (train::init_process_group); with none (one rank) the trainer is
// returned as it was.
inline Trainer prepare_trainer(Trainer trainer, c10::intrusive_ptr<c10d::ProcessGroup> group = {}) {
  if (!group) group = default_process_group();
  if (group && group->getSize() > 1) trainer.set_process_group(std::move(group));
  return trainer;
}

}  // namespace train
