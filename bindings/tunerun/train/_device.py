"""The rank's device and the moves onto it, for tunerun.train.torch and
DatasetShard.iter_torch_batches. torch is imported by the calls, not by this
module: get_dataset_shard's module imports it in ranks that may not use torch."""

import os


def get_device():
    """The rank's device: its GPU when it has one, else the CPU."""
    import torch
    if torch.cuda.is_available() and os.environ.get("CUDA_VISIBLE_DEVICES", "") != "":
        return torch.device("cuda", 0)
    return torch.device("cpu")


def to_device(batch, device):
    """`batch` (a tensor, or lists, tuples and dicts of them) on `device`."""
    import torch
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


class DeviceLoader:
    """A DataLoader whose batches arrive on `device`."""

    def __init__(self, loader, device):
        self._loader = loader
        self._device = device
        self.sampler = loader.sampler
        self.dataset = loader.dataset

    def __len__(self):
        return len(self._loader)

    def __iter__(self):
        for batch in self._loader:
            yield to_device(batch, self._device)
