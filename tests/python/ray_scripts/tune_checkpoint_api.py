# After Ray's Checkpoint reference and "Saving and Loading Checkpoints"
# (doc/source/train/user-guides/checkpoints.rst, doc/source/tune/tutorials/
# tune-trial-checkpoints.rst): Checkpoint.from_directory, as_directory,
# to_directory, get_metadata/set_metadata, tune.report (Ray 2.x's) with a
# checkpoint, the checkpoint of the best result reloaded, and
# Result.get_best_checkpoint.
import os
import pickle
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint


def trainable(config):
    state = {"step": 0, "w": 0.0}
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "state.pkl"), "rb") as f:
                state = pickle.load(f)
    while state["step"] < 6:
        state["step"] += 1
        state["w"] += config["lr"]
        loss = (state["w"] - 1.0) ** 2
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "state.pkl"), "wb") as f:
                pickle.dump(state, f)
            ckpt = Checkpoint.from_directory(tmp)
            ckpt.set_metadata({"step": state["step"]})
            tune.report({"loss": loss, "step": state["step"]}, checkpoint=ckpt)


results = tune.Tuner(
    trainable,
    param_space={"lr": tune.grid_search([0.05, 0.2, 0.5])},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
    run_config=tune.RunConfig(
        storage_path=os.path.abspath("results"),
        checkpoint_config=tune.CheckpointConfig(num_to_keep=2,
                                                checkpoint_score_attribute="loss",
                                                checkpoint_score_order="min")),
).fit()
best = results.get_best_result()
assert best.config["lr"] == 0.2, best.config
ckpt = best.checkpoint
assert ckpt.get_metadata() == {"step": 6}, ckpt.get_metadata()
target = os.path.abspath("exported")
path = ckpt.to_directory(target)
assert os.path.realpath(path) == os.path.realpath(target)
with open(os.path.join(target, "state.pkl"), "rb") as f:
    assert pickle.load(f)["step"] == 6
with ckpt.as_directory() as d:
    assert os.path.exists(os.path.join(d, "state.pkl"))
best_ckpt = best.get_best_checkpoint(metric="loss", mode="min")
with best_ckpt.as_directory() as d:
    with open(os.path.join(d, "state.pkl"), "rb") as f:
        s = pickle.load(f)
assert s["step"] == 5, s  # lr 0.2: w reaches 1.0 at step 5
assert len(best.best_checkpoints) == 2
for r in results:
    print(r.config, r.metrics["loss"], r.checkpoint.path)
