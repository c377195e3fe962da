"""Ray Train's train.huggingface.transformers: RayTrainReportCallback and
prepare_trainer for a transformers.Trainer run in a TorchTrainer's ranks,
following transformers' documented TrainerCallback interface (on_log,
on_save... with args, state, control). transformers is not packaged in
Debian 12: this module imports without it (the callback then derives from
object) and uses transformers only when it is there; its tests drive the
hooks in transformers' documented order with a small stand-in Trainer.

    trainer = transformers.Trainer(model=model, args=args, train_dataset=..., eval_dataset=...)
    trainer.add_callback(RayTrainReportCallback())
    trainer = prepare_trainer(trainer)
    trainer.train()
"""

import os
import re
import shutil
import tempfile

from tunerun.train.checkpoint import Checkpoint

try:  # the base class when transformers is installed
    from transformers import TrainerCallback as _Base
except ImportError:
    _Base = object

_CHECKPOINT_FOLDER = re.compile(r"^checkpoint-(\d+)$")  # transformers' PREFIX_CHECKPOINT_DIR


def _last_checkpoint(output_dir):
    """transformers.trainer_utils.get_last_checkpoint: the checkpoint-<step>
    folder of the highest step in output_dir, or None."""
    if not os.path.isdir(output_dir):
        return None
    steps = [(int(m.group(1)), name) for name in os.listdir(output_dir)
             if (m := _CHECKPOINT_FOLDER.match(name)) and
             os.path.isdir(os.path.join(output_dir, name))]
    return os.path.join(output_dir, max(steps)[1]) if steps else None


class RayTrainReportCallback(_Base):
    """Ray's: at every save of the Trainer (on_save), reports the metrics
    logged so far (state.log_history, later entries winning) and the
    checkpoint transformers just wrote (the newest checkpoint-<step> in
    args.output_dir, copied under CHECKPOINT_NAME in the Ray checkpoint)."""

    CHECKPOINT_NAME = "checkpoint"

    def on_save(self, args, state, control, **kwargs):
        from tunerun.train.session import report
        metrics = {}
        for log in state.log_history:
            metrics.update(log)
        source = _last_checkpoint(args.output_dir)
        with tempfile.TemporaryDirectory() as directory:
            checkpoint = None
            if source is not None:
                shutil.copytree(source, os.path.join(directory, self.CHECKPOINT_NAME))
                checkpoint = Checkpoint.from_directory(directory)
            report(metrics, checkpoint=checkpoint)
        return control


class _BatchesDataset:
    """A torch IterableDataset over an iterable of ready batches (Ray Data's
    iter_torch_batches()), each yielded whole."""

    def __new__(cls, batches):
        from torch.utils.data import IterableDataset

        class Batches(IterableDataset):
            def __iter__(self):
                return iter(batches)

        return Batches()


def _is_batch_iterable(dataset):
    """Ray Data's iter_torch_batches() (or a generator of batches), not a
    torch or datasets Dataset the Trainer batches itself."""
    import types
    from tunerun.data.dataset import BatchIterable
    return isinstance(dataset, (BatchIterable, types.GeneratorType))


def prepare_trainer(trainer):
    """Ray's: the Trainer, its train and eval data loaders taking a Ray Data
    iterable of batches (ds.iter_torch_batches(...)) as ready batches; other
    datasets are loaded as the Trainer does. Returns the same Trainer."""
    from torch.utils.data import DataLoader
    base = type(trainer)

    def loader(dataset):
        return DataLoader(_BatchesDataset(dataset), batch_size=1, collate_fn=lambda x: x[0])

    class RayTransformersTrainer(base):
        def get_train_dataloader(self):
            if _is_batch_iterable(self.train_dataset):
                return loader(self.train_dataset)
            return super().get_train_dataloader()

        def get_eval_dataloader(self, eval_dataset=None):
            dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
            if _is_batch_iterable(dataset):
                return loader(dataset)
            return super().get_eval_dataloader(eval_dataset)

    RayTransformersTrainer.__name__ = base.__name__
    trainer.__class__ = RayTransformersTrainer
    return trainer
