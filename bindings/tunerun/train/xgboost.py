"""Ray Train's train.xgboost over Debian's python3-xgboost: XGBoostTrainer
and RayTrainReportCallback.

XGBoostTrainer runs `train_loop_per_worker` on each rank, as TorchTrainer
does (datasets, get_dataset_shard, checkpoints, Tuner), inside xgboost's
collective communicator: with more than one rank, rank 0 hosts xgboost's
Rabit tracker at the group's MASTER_PORT and `xgboost.train` in every rank
builds one booster over all the ranks' shards (data-parallel, as Ray's).

    def train_func():
        shard = train.get_dataset_shard("train").materialize().to_pandas()
        dtrain = xgboost.DMatrix(shard.drop("target", axis=1), label=shard["target"])
        xgboost.train(params, dtrain, evals=[(dtrain, "train")],
                      callbacks=[RayTrainReportCallback()])

    XGBoostTrainer(train_func, datasets={"train": ds},
                   scaling_config=ScalingConfig(num_workers=2)).fit()

Ray 2.0-2.42's form, XGBoostTrainer(label_column=, params=, num_boost_round=,
datasets=), runs a loop of ours: every dataset is an evaluation set named
by its key ("train-logloss", "valid-error"), a checkpoint at the end (and
every `checkpoint_frequency` rounds); a Tuner tunes it through
param_space={"params": {...}, "num_boost_round": ...}.
"""

import os

from tunerun.train.config import ScalingConfig
from tunerun.train.torch import TorchTrainer
from tunerun.tune.integration.xgboost import TuneReportCheckpointCallback


class RayTrainReportCallback(TuneReportCheckpointCallback):
    """Ray's train.xgboost.RayTrainReportCallback: xgboost's TrainingCallback
    reporting each round's evaluation results as "<eval>-<metric>"
    (`metrics` picks or renames them), with the booster as a checkpoint
    (CHECKPOINT_NAME in it) every `frequency` rounds and at the end. Every
    rank reports; rank 0 alone writes the booster (all ranks hold the same)."""

    CHECKPOINT_NAME = "model.ubj"

    def __init__(self, metrics=None, filename=CHECKPOINT_NAME, frequency=0,
                 checkpoint_at_end=True, results_postprocessing_fn=None):
        super().__init__(metrics=metrics, filename=filename, frequency=frequency,
                         checkpoint_at_end=checkpoint_at_end,
                         results_postprocessing_fn=results_postprocessing_fn)

    def _report(self, model, results, checkpoint):
        from tunerun.train.session import get_context
        rank = get_context().get_world_rank()
        super()._report(model, results, checkpoint and rank in (0, None))


class _CollectiveLoop:
    """The user's loop inside xgboost's communicator (one rank: none)."""

    def __init__(self, loop):
        import inspect
        self.loop = loop
        self.takes_config = len(inspect.signature(loop).parameters) > 0

    def __call__(self, config):
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        if world_size <= 1:
            return self._run(config)
        from xgboost import collective
        rank = int(os.environ["RANK"])
        host, port = os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ["MASTER_PORT"])
        tracker = None
        if rank == 0:
            from xgboost.tracker import RabitTracker
            tracker = RabitTracker(host_ip=host, n_workers=world_size, port=port)
            tracker.start(world_size)
        with collective.CommunicatorContext(dmlc_communicator="rabit", DMLC_TRACKER_URI=host,
                                            DMLC_TRACKER_PORT=port, DMLC_TASK_ID=str(rank)):
            self._run(config)
        if tracker is not None:
            tracker.join()  # every rank has shut down: none is left without its tracker

    def _run(self, config):
        return self.loop(config) if self.takes_config else self.loop()


def _legacy_loop(config):
    """Ray 2.0-2.42's XGBoostTrainer: xgboost.train over the datasets."""
    import xgboost
    from tunerun.train import dataset_shard, session
    label = config["label_column"]
    frames = {name: dataset_shard.get_dataset_shard(name).to_pandas()
              for name in config["dataset_names"]}

    def matrix(frame):
        return xgboost.DMatrix(frame.drop(columns=[label]), label=frame[label],
                               **config.get("dmatrix_params", {}))

    matrices = {name: matrix(frame) for name, frame in frames.items()}
    checkpoint = session.get_checkpoint()
    model = XGBoostTrainer.get_model(checkpoint) if checkpoint else None
    done = model.num_boosted_rounds() if model is not None else 0
    xgboost.train(config.get("params", {}), matrices["train"],
                  num_boost_round=max(config["num_boost_round"] - done, 0),
                  evals=[(m, name) for name, m in matrices.items()], xgb_model=model,
                  verbose_eval=False,
                  callbacks=[RayTrainReportCallback(frequency=config["checkpoint_frequency"])])


class XGBoostTrainer(TorchTrainer):
    """Ray's train.xgboost.XGBoostTrainer: a TorchTrainer whose ranks train
    with xgboost's collective (no torch process group). Either a
    train_loop_per_worker, or Ray 2.0-2.42's label_column, params,
    num_boost_round and datasets (with a "train" dataset)."""

    def __init__(self, train_loop_per_worker=None, *, train_loop_config=None,
                 xgboost_config=None, scaling_config=None, run_config=None, datasets=None,
                 dataset_config=None, resume_from_checkpoint=None, metadata=None,
                 label_column=None, params=None, num_boost_round=10, dmatrix_params=None,
                 **legacy):
        self.xgboost_config = xgboost_config
        if train_loop_per_worker is None:
            if label_column is None or not datasets or "train" not in datasets:
                raise ValueError("XGBoostTrainer: give train_loop_per_worker, or label_column "
                                 "and datasets with a \"train\" dataset (Ray 2.0-2.42's form)")
            unknown = set(legacy) - {"checkpoint_frequency"}
            if unknown:
                raise ValueError(f"XGBoostTrainer: unknown arguments {sorted(unknown)}")
            train_loop_config = {
                "label_column": label_column, "params": dict(params or {}),
                "num_boost_round": num_boost_round, "dmatrix_params": dmatrix_params or {},
                "dataset_names": list(datasets),
                "checkpoint_frequency": legacy.get("checkpoint_frequency", 0),
                **(train_loop_config or {})}
            train_loop_per_worker = _legacy_loop
        elif legacy:
            raise ValueError(f"XGBoostTrainer: unknown arguments {sorted(legacy)}")
        super().__init__(train_loop_per_worker, train_loop_config=train_loop_config,
                         scaling_config=scaling_config or ScalingConfig(),
                         run_config=run_config, datasets=datasets,
                         dataset_config=dataset_config,
                         resume_from_checkpoint=resume_from_checkpoint, metadata=metadata)
        self._legacy = train_loop_per_worker is _legacy_loop

    def _tunerun_trainer(self):
        made = super()._tunerun_trainer()
        made.runs = _CollectiveLoop(self.train_loop_per_worker)
        made.ref.pop("torch_config", None)
        return made

    def _tuned_space(self, param_space):
        """Ray 2.0-2.42's Tuner keys of this trainer, "params" and
        "num_boost_round", as train_loop_config entries (where the ranks read them)."""
        if not self._legacy or not isinstance(param_space, dict):
            return param_space
        space = dict(param_space)
        loop = dict(space.pop("train_loop_config", None) or {})
        for key in ("params", "num_boost_round"):
            if key in space:
                loop[key] = space.pop(key)
        if loop:
            space["train_loop_config"] = loop
        return space

    @classmethod
    def get_model(cls, checkpoint, filename=None):
        """The Booster a checkpoint holds (model.ubj, or model.json of the
        tune integration's callback)."""
        import xgboost
        booster = xgboost.Booster()
        with checkpoint.as_directory() as path:
            names = [filename] if filename else [RayTrainReportCallback.CHECKPOINT_NAME,
                                                 TuneReportCheckpointCallback.CHECKPOINT_NAME]
            for name in names:
                if os.path.exists(os.path.join(path, name)):
                    booster.load_model(os.path.join(path, name))
                    return booster
        raise ValueError(f"XGBoostTrainer.get_model: {checkpoint.path} holds none of {names}")
