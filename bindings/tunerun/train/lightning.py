"""Ray Train's train.lightning: RayDDPStrategy, RayLightningEnvironment,
RayTrainReportCallback and prepare_trainer, for a Lightning Trainer run in
a TorchTrainer's ranks, following Lightning's documented Strategy,
ClusterEnvironment and Callback interfaces. Lightning is not packaged in
Debian 12: this module imports without it (the classes then derive from
object) and derives from Lightning's when `lightning` or `pytorch_lightning`
is installed; its tests drive the hooks in Lightning's documented order
with a small stand-in Trainer.

    trainer = pl.Trainer(devices="auto", accelerator="auto",
                         strategy=RayDDPStrategy(), plugins=[RayLightningEnvironment()],
                         callbacks=[RayTrainReportCallback()])
    trainer = prepare_trainer(trainer)
    trainer.fit(model, train_dataloaders=loader)
"""

import os
import shutil
import tempfile

from tunerun.train.checkpoint import Checkpoint


def _lightning():
    """lightning.pytorch, else pytorch_lightning, else None."""
    try:
        import lightning.pytorch as pl
        return pl
    except ImportError:
        try:
            import pytorch_lightning as pl
            return pl
        except ImportError:
            return None


_pl = _lightning()
_DDPStrategy = _pl.strategies.DDPStrategy if _pl else object
_Environment = _pl.plugins.environments.LightningEnvironment if _pl else object
_Callback = _pl.callbacks.Callback if _pl else object


def _context():
    from tunerun.train.session import get_context
    return get_context()


class RayDDPStrategy(_DDPStrategy):
    """Lightning's DDPStrategy on the rank's device, its sampler splitting
    the data over the TorchTrainer's ranks."""

    @property
    def root_device(self):
        from tunerun.train._device import get_device
        return get_device()

    @property
    def distributed_sampler_kwargs(self):
        context = _context()
        return {"num_replicas": context.get_world_size(), "rank": context.get_world_rank()}

    if _pl is None:  # Lightning's DDPStrategy has its own
        def barrier(self, name=None):
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                dist.barrier()


class RayLightningEnvironment(_Environment):
    """Lightning's ClusterEnvironment answering from the TorchTrainer's
    ranks; the processes exist already (creates_processes_externally)."""

    @property
    def creates_processes_externally(self):
        return True

    @property
    def main_address(self):
        return os.environ.get("MASTER_ADDR", "127.0.0.1")

    @property
    def main_port(self):
        return int(os.environ.get("MASTER_PORT", "0"))

    @staticmethod
    def detect():
        return True

    def world_size(self):
        return _context().get_world_size()

    def global_rank(self):
        return _context().get_world_rank()

    def local_rank(self):
        return _context().get_local_rank()

    def node_rank(self):
        return _context().get_node_rank()

    def set_world_size(self, size):
        pass  # the TorchTrainer decides it

    def set_global_rank(self, rank):
        pass

    def teardown(self):
        pass


class RayTrainReportCallback(_Callback):
    """Ray's: at the end of each training epoch, every rank reports the
    Trainer's callback_metrics (tensors as numbers) with "epoch" and "step",
    and the Trainer's checkpoint (trainer.save_checkpoint into
    CHECKPOINT_NAME), then waits at the strategy's barrier."""

    CHECKPOINT_NAME = "checkpoint.ckpt"

    def on_train_epoch_end(self, trainer, pl_module):
        from tunerun.train.session import report
        metrics = {key: value.item() if hasattr(value, "item") else value
                   for key, value in dict(trainer.callback_metrics).items()}
        metrics["epoch"] = trainer.current_epoch
        metrics["step"] = trainer.global_step
        directory = tempfile.mkdtemp(prefix="lightning_checkpoint_")
        try:
            trainer.save_checkpoint(os.path.join(directory, self.CHECKPOINT_NAME),
                                    weights_only=False)
            report(metrics, checkpoint=Checkpoint.from_directory(directory))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        trainer.strategy.barrier()


def prepare_trainer(trainer):
    """Ray's: checks the Trainer runs on Ray's strategy and cluster
    environment (RuntimeError naming what to pass), and returns it."""
    strategy = getattr(trainer, "strategy", None)
    if not isinstance(strategy, RayDDPStrategy):
        raise RuntimeError(f"prepare_trainer: the Trainer's strategy is "
                           f"{type(strategy).__name__}; pass strategy=RayDDPStrategy() "
                           "(tunerun.train.lightning)")
    environment = getattr(strategy, "cluster_environment", None)
    if environment is not None and not isinstance(environment, RayLightningEnvironment):
        raise RuntimeError(f"prepare_trainer: the Trainer's cluster environment is "
                           f"{type(environment).__name__}; pass "
                           "plugins=[RayLightningEnvironment()]")
    return trainer
