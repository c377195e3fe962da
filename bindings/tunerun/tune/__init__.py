"""Ray Tune's tune module over tunerun: Tuner, TuneConfig, the search-space
domains, tune.schedulers, tune.search, ResultGrid, Trainable. Imported
lazily (tunerun/_lazy.py): a worker loads only what its trainable uses."""

from tunerun import _lazy

_DOMAINS = ["Domain", "choice", "grid_search", "lograndint", "loguniform", "qlograndint",
            "qloguniform", "qrandint", "qrandn", "quniform", "randint", "randn", "sample_from",
            "uniform"]

_lazy.install(globals(), {
    **{m: f"tunerun.tune.{m}"
       for m in ("analysis", "error", "examples", "experiment", "integration", "logger",
                 "progress_reporter", "result", "schedulers", "search", "stopper", "utils")},
    **{name: f"tunerun.tune.search_space:{name}" for name in _DOMAINS},
    **{name: f"tunerun.tune.callback:{name}" for name in ("Callback", "Stopper")},
    **{name: f"tunerun.tune.result_grid:{name}" for name in ("Result", "ResultGrid")},
    **{name: f"tunerun.tune.error:{name}" for name in ("TrialError", "TuneError")},
    **{name: f"tunerun.tune.trainable:{name}" for name in ("Trainable", "with_parameters")},
    **{name: f"tunerun.tune.tuner:{name}" for name in ("TuneConfig", "Tuner", "with_resources")},
    "PlacementGroupFactory": "tunerun.tune.placement_groups:PlacementGroupFactory",
    **{name: f"tunerun.train.session:{name}" for name in ("report", "get_checkpoint",
                                                            "get_context", "should_checkpoint",
                                                            "checkpoint_dir")},
    "Checkpoint": "tunerun.train.checkpoint:Checkpoint",
    **{name: f"tunerun.tune.progress:{name}" for name in ("CLIReporter", "JupyterNotebookReporter",
                                                           "ProgressReporter")},
    "create_scheduler": "tunerun.tune.schedulers:create_scheduler",
    "create_searcher": "tunerun.tune.search:create_searcher",
    "register_trainable": "tunerun.tune.registry:register_trainable",
    **{name: f"tunerun.tune.legacy:{name}" for name in ("Experiment", "ExperimentAnalysis",
                                                          "run", "run_experiments")},
    # Ray 2.7+ spells these tune.*; the same classes as train.*.
    **{name: f"tunerun.train.config:{name}" for name in ("CheckpointConfig", "FailureConfig",
                                                         "RunConfig")},
})
