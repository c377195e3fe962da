# After Ray's "How to Save and Load Trial Checkpoints" guide
# (doc/source/tune/doc_code/trial_checkpoint.py): a function trainable that
# resumes from train.get_checkpoint(), CheckpointConfig(num_to_keep), and the
# restart after a failure (FailureConfig(max_failures)).
import json
import os
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint


def trainable(config):
    start = 1
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "state.json")) as f:
                start = json.load(f)["epoch"] + 1
    for epoch in range(start, config["epochs"] + 1):
        if epoch == 3 and checkpoint is None:
            raise RuntimeError("a failure after the second epoch's checkpoint")
        with tempfile.TemporaryDirectory() as tempdir:
            with open(os.path.join(tempdir, "state.json"), "w") as f:
                json.dump({"epoch": epoch}, f)
            train.report({"epoch": epoch, "start": start},
                         checkpoint=Checkpoint.from_directory(tempdir))


results = tune.Tuner(
    trainable,
    param_space={"epochs": 5},
    run_config=train.RunConfig(
        checkpoint_config=train.CheckpointConfig(num_to_keep=2,
                                                 checkpoint_score_attribute="epoch",
                                                 checkpoint_score_order="max"),
        failure_config=train.FailureConfig(max_failures=1)),
).fit()
result = results[0]
assert result.error is None, result.error
assert result.metrics["epoch"] == 5
assert result.metrics["start"] == 3
assert len(result.best_checkpoints) == 2
with result.checkpoint.as_directory() as d:
    assert json.load(open(os.path.join(d, "state.json")))["epoch"] == 5
