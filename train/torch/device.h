// The device a rank trains on, as Ray Train's train.torch.get_device().
//
// The controller gives each rank that asked for GPUs (ScalingConfig::use_gpu,
// gpus_per_worker) its own devices as CUDA_VISIBLE_DEVICES, so inside the
// rank they are cuda:0, cuda:1...; ranks without GPUs get an empty list.
#pragma once

#include <c10/core/Device.h>

#include "train/torch/process_group.h"

namespace train {

// cuda:0 when this rank was given a GPU (CUDA_VISIBLE_DEVICES names one) and
// libtorch sees CUDA; else the CPU. Throws tune::ConfigError when a GPU was
// given but this libtorch has no CUDA (a CPU-only build asked to use_gpu).
c10::Device get_device();

// The backend for get_device(): NCCL for CUDA, Gloo for the CPU.
Backend default_backend();

// Sets libtorch's intra-op threads to this rank's OMP_NUM_THREADS (the
// controller sets it to the worker's CPUs), 1 when unset.
void use_rank_threads();

}  // namespace train
