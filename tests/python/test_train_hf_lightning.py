"""train.huggingface.transformers and train.lightning in a TorchTrainer's
ranks. Neither transformers nor Lightning is packaged in Debian 12: small
stand-in Trainers call the hooks in the order those libraries document
(transformers: on_log after logging, on_save after writing
output_dir/checkpoint-<step>; Lightning: on_train_epoch_end after each
epoch, then the strategy's barrier), with Ray's helpers taken as the
libraries would take them."""

import os

import pytest

torch = pytest.importorskip("torch")

import tunerun as ray  # noqa: E402
from tunerun import train  # noqa: E402
from tunerun.train.torch import TorchTrainer  # noqa: E402


# transformers ------------------------------------------------------------


class HFArgs:
    def __init__(self, output_dir, num_train_epochs):
        self.output_dir = output_dir
        self.num_train_epochs = num_train_epochs


class HFState:
    def __init__(self):
        self.log_history = []
        self.global_step = 0
        self.epoch = 0.0


class StandInHFTrainer:
    """transformers.Trainer's loop as its docs order the callbacks: per
    epoch the steps, on_log with the training loss, an evaluation logged,
    then the checkpoint written to output_dir/checkpoint-<global_step> and
    on_save."""

    def __init__(self, model, args, train_dataset, eval_dataset=None, callbacks=()):
        self.model, self.args = model, args
        self.train_dataset, self.eval_dataset = train_dataset, eval_dataset
        self.callbacks = list(callbacks)
        self.state, self.control = HFState(), object()

    def add_callback(self, callback):
        self.callbacks.append(callback)

    def get_train_dataloader(self):
        raise AssertionError("a dataset of ready batches needs prepare_trainer")

    def get_eval_dataloader(self, eval_dataset=None):
        raise AssertionError("a dataset of ready batches needs prepare_trainer")

    def _call(self, hook):
        # transformers' CallbackHandler: TrainerCallback has every hook; a
        # callback built without transformers has only those it uses.
        for callback in self.callbacks:
            method = getattr(callback, hook, None)
            if method is not None:
                method(self.args, self.state, self.control)

    def train(self):
        optimiser = torch.optim.SGD(self.model.parameters(), lr=0.1)
        for epoch in range(self.args.num_train_epochs):
            losses = []
            for batch in self.get_train_dataloader():
                loss = ((self.model(batch["x"].float().unsqueeze(1)).squeeze(1)
                         - batch["y"].float()) ** 2).mean()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                losses.append(loss.item())
                self.state.global_step += 1
            self.state.epoch = float(epoch + 1)
            # As transformers logs it: the mean training loss since the last log.
            self.state.log_history.append({"loss": sum(losses) / len(losses),
                                           "epoch": self.state.epoch,
                                           "step": self.state.global_step})
            self._call("on_log")
            with torch.no_grad():
                batches = list(self.get_eval_dataloader())
            self.state.log_history.append({"eval_batches": len(batches),
                                           "epoch": self.state.epoch})
            folder = os.path.join(self.args.output_dir, f"checkpoint-{self.state.global_step}")
            os.makedirs(folder)
            torch.save(self.model.state_dict(), os.path.join(folder, "pytorch_model.bin"))
            self._call("on_save")


def hf_loop(config):
    from tunerun.train.huggingface.transformers import RayTrainReportCallback, prepare_trainer
    context = train.get_context()
    shard = train.get_dataset_shard("train")
    output = os.path.join(config["out"], f"rank_{context.get_world_rank()}")
    torch.manual_seed(0)  # the same start on every rank, as DDP gives it
    trainer = StandInHFTrainer(
        torch.nn.Linear(1, 1), HFArgs(output, num_train_epochs=3),
        train_dataset=shard.iter_torch_batches(batch_size=4),
        eval_dataset=train.get_dataset_shard("eval").iter_torch_batches(batch_size=2))
    trainer.add_callback(RayTrainReportCallback())
    trainer = prepare_trainer(trainer)
    assert type(trainer).__name__ == "StandInHFTrainer"
    trainer.train()


def test_transformers_callback_reports_each_save_with_its_checkpoint(storage, tmp_path):
    data = ray.data.from_items([{"x": i / 16, "y": 2 * i / 16} for i in range(16)])
    result = TorchTrainer(
        hf_loop, train_loop_config={"out": str(tmp_path)},
        scaling_config=train.ScalingConfig(num_workers=2),
        datasets={"train": data, "eval": ray.data.range(8).map(lambda r: {"x": r["id"],
                                                                          "y": 0})},
        run_config=train.RunConfig(name="hf", storage_path=storage, verbose=0)).fit()
    history = result.metrics_dataframe.sort_values("training_iteration")
    assert list(history["epoch"]) == [1.0, 2.0, 3.0]
    # Each rank has 8 rows: 2 batches an epoch, every epoch (the iterable is read anew).
    assert list(history["step"]) == [2, 4, 6]
    assert list(history["eval_batches"]) == [2, 2, 2]  # the logged metrics merged
    assert history["loss"].iloc[-1] < history["loss"].iloc[0]
    saved = os.path.join(result.checkpoint.path, "checkpoint", "pytorch_model.bin")
    assert set(torch.load(saved)) == {"weight", "bias"}


# Lightning ---------------------------------------------------------------


class StandInLightningTrainer:
    """Lightning's Trainer as its docs order it: per epoch the steps (the
    sampler from the strategy's distributed_sampler_kwargs), then each
    callback's on_train_epoch_end(trainer, module)."""

    def __init__(self, max_epochs, strategy, plugins=(), callbacks=()):
        self.max_epochs, self.strategy, self.callbacks = max_epochs, strategy, list(callbacks)
        self.strategy.cluster_environment = plugins[0] if plugins else None
        self.current_epoch, self.global_step, self.callback_metrics = 0, 0, {}
        self.barriers = 0

    def save_checkpoint(self, path, weights_only=False):
        torch.save({"state_dict": self.module.state_dict(), "epoch": self.current_epoch}, path)

    def fit(self, module, data):
        from torch.utils.data import DataLoader, DistributedSampler
        self.module = module
        sampler = DistributedSampler(data, shuffle=False,
                                     **self.strategy.distributed_sampler_kwargs)
        optimiser = torch.optim.SGD(module.parameters(), lr=0.1)
        for epoch in range(self.max_epochs):
            self.current_epoch = epoch
            for x, y in DataLoader(data, batch_size=2, sampler=sampler):
                loss = ((module(x.to(self.strategy.root_device)) - y) ** 2).mean()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                self.global_step += 1
            self.callback_metrics = {"train_loss": loss.detach()}
            for callback in self.callbacks:
                callback.on_train_epoch_end(self, module)


def lightning_loop(config):
    from tunerun.train.lightning import (RayDDPStrategy, RayLightningEnvironment,
                                         RayTrainReportCallback, prepare_trainer)
    environment = RayLightningEnvironment()
    context = train.get_context()
    assert (environment.world_size(), environment.global_rank()) == \
        (context.get_world_size(), context.get_world_rank())
    assert environment.creates_processes_externally and environment.main_port > 0
    trainer = StandInLightningTrainer(2, strategy=RayDDPStrategy(), plugins=[environment],
                                      callbacks=[RayTrainReportCallback()])
    trainer = prepare_trainer(trainer)
    xs = torch.arange(8, dtype=torch.float32).unsqueeze(1) / 8
    data = torch.utils.data.TensorDataset(xs, 3 * xs)
    trainer.fit(torch.nn.Linear(1, 1), data)
    train.report({"rank_steps": trainer.global_step,
                  "device": str(trainer.strategy.root_device)})


def test_lightning_helpers_shard_report_and_checkpoint_each_epoch(storage):
    result = TorchTrainer(
        lightning_loop, scaling_config=train.ScalingConfig(num_workers=2),
        run_config=train.RunConfig(name="lightning", storage_path=storage, verbose=0)).fit()
    history = result.metrics_dataframe.sort_values("training_iteration")
    assert list(history["epoch"][:2]) == [0, 1]
    assert list(history["step"][:2]) == [2, 4]  # 4 of 8 rows a rank, batches of 2
    assert history["train_loss"].notna().sum() == 2
    assert result.metrics["rank_steps"] == 4 and result.metrics["device"] == "cpu"
    checkpoints = [os.path.join(result.path, name) for name in sorted(os.listdir(result.path))
                   if name.startswith("checkpoint_")]
    saved = torch.load(os.path.join(checkpoints[-1], "checkpoint.ckpt"))
    assert saved["epoch"] == 1 and set(saved["state_dict"]) == {"weight", "bias"}


def test_lightning_prepare_trainer_refuses_another_strategy():
    from tunerun.train.lightning import prepare_trainer

    class Elsewhere:
        strategy = object()

    with pytest.raises(RuntimeError, match="pass strategy=RayDDPStrategy"):
        prepare_trainer(Elsewhere())
