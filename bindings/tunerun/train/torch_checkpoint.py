"""Ray Train's TorchCheckpoint: a train.Checkpoint holding a PyTorch model
or its state dict in model.pt (Ray's file name), made in a temporary
directory that train.report() publishes and then removes."""

import os
import tempfile

import torch

from tunerun.train.checkpoint import Checkpoint


class TorchCheckpoint(Checkpoint):
    MODEL_FILENAME = "model.pt"

    @classmethod
    def from_state_dict(cls, state_dict, *, preprocessor=None) -> "TorchCheckpoint":
        """A checkpoint of a model's state_dict(); get_model(model) loads it back."""
        return cls._saving(state_dict, preprocessor)

    @classmethod
    def from_model(cls, model, *, preprocessor=None) -> "TorchCheckpoint":
        """A checkpoint of the whole model (torch.save of the module);
        get_model() returns it. A DistributedDataParallel wrapper is unwrapped."""
        if isinstance(model, torch.nn.parallel.DistributedDataParallel):
            model = model.module
        return cls._saving(model, preprocessor)

    @classmethod
    def _saving(cls, value, preprocessor):
        if preprocessor is not None:
            raise ValueError("TorchCheckpoint: preprocessor is not supported (no Ray Data "
                             "preprocessors here)")
        path = tempfile.mkdtemp(prefix="checkpoint_")
        torch.save(value, os.path.join(path, cls.MODEL_FILENAME))
        checkpoint = cls(path)
        checkpoint._temporary = True  # report() removes the directory once copied
        return checkpoint

    def get_model(self, model=None):
        """The saved model: a whole model as saved, or the state dict loaded
        into `model` (needed then; keys of a DistributedDataParallel's
        state dict, "module."-prefixed, load too)."""
        saved = torch.load(os.path.join(self.path, self.MODEL_FILENAME), weights_only=False)
        if isinstance(saved, torch.nn.Module):
            return saved
        if model is None:
            raise ValueError("TorchCheckpoint.get_model: this checkpoint holds a state dict; "
                             "pass the model to load it into (get_model(model))")
        if saved and all(key.startswith("module.") for key in saved):
            saved = {key[len("module."):]: value for key, value in saved.items()}
        model.load_state_dict(saved)
        return model
