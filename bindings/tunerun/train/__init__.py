"""Ray Train's train module over tunerun: RunConfig and its parts,
ScalingConfig, Checkpoint, and the session calls (report, get_checkpoint,
get_context). tunerun.train.torch holds TorchTrainer and the DDP helpers.
Imported lazily (tunerun/_lazy.py): a worker loads only what it uses."""

from tunerun import _lazy

_lazy.install(globals(), {
    **{name: f"tunerun.train.config:{name}" for name in (
        "CheckpointConfig", "ClusterConfig", "FailureConfig", "RunConfig", "ScalingConfig")},
    **{name: f"tunerun.train.session:{name}" for name in (
        "StopTrial", "TrainContext", "TrialDone", "get_checkpoint", "get_context", "report",
        "should_checkpoint")},
    "Checkpoint": "tunerun.train.checkpoint:Checkpoint",
    "TrainingFailedError": "tunerun.train.base_trainer:TrainingFailedError",
    # Submodules, so `train.torch.prepare_model` works where nothing imported them
    # yet (a rank running a trainable that says so).
    **{m: f"tunerun.train.{m}" for m in ("base_trainer", "huggingface", "lightning", "torch",
                                               "xgboost")},
    "get_dataset_shard": "tunerun.train.dataset_shard:get_dataset_shard",
    "DataConfig": "tunerun.data.data_config:DataConfig",
    "Result": "tunerun.tune.result_grid:Result",
})
