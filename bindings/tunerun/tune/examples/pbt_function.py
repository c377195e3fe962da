"""The toy PBT problem of Ray's PBT examples: a trainable whose accuracy
grows fastest when its `lr` follows a triangle wave of the accuracy itself
(0.001 at 0, 0.01 at the midpoint 100, back to 0.001 at 200). A fixed lr
does not converge; a population of 2-4 under PBT or PB2 approximates the
wave. It checkpoints every config["checkpoint_interval"] steps (default 1)
and reports done=True once the accuracy passes 200."""

import json
import os
import random
import tempfile

from tunerun import train

_MIDPOINT = 100.0  # the optimal lr falls again past this accuracy
_TOLERANCE = 3.0   # an lr more than this factor off the optimum loses accuracy
_NOISE = 2.0       # standard deviation of the noise on each step's gain


def optimal_lr(accuracy):
    rising = 0.01 * accuracy / _MIDPOINT
    falling = 0.01 - 0.01 * (accuracy - _MIDPOINT) / _MIDPOINT
    return min(0.01, max(0.001, rising if accuracy < _MIDPOINT else falling))


def pbt_function(config):
    lr = config["lr"]
    interval = config.get("checkpoint_interval", 1)
    accuracy, step = 0.0, 1
    checkpoint = train.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "state.json")) as f:
                state = json.load(f)
        accuracy, step = state["accuracy"], state["step"] + 1
    while True:
        best = optimal_lr(accuracy)
        q_err = max(lr, best) / min(lr, best)
        if q_err < _TOLERANCE:
            accuracy += random.random() / q_err
        elif lr > best:
            accuracy -= (q_err - _TOLERANCE) * random.random()
        accuracy = max(0.0, accuracy + random.gauss(0.0, _NOISE))
        metrics = {"mean_accuracy": accuracy, "cur_lr": lr, "optimal_lr": best,
                   "q_err": q_err, "done": accuracy > 2 * _MIDPOINT}
        if step % interval == 0:
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "state.json"), "w") as f:
                    json.dump({"accuracy": accuracy, "step": step}, f)
                train.report(metrics, checkpoint=train.Checkpoint.from_directory(d))
        else:
            train.report(metrics)
        step += 1
