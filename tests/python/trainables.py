"""Trainables of the Python tests: functions of an importable module, which
the ranks import by reference (cloudpickle pickles them by name)."""

import json
import math
import os
import signal
import tempfile

from tunerun import train, tune


def quadratic(config):
    for step in range(config.get("steps", 3)):
        const = config.get("const", {})
        train.report({"loss": (config["x"] - 2) ** 2 + 1 / (step + 1), "pid": os.getpid(),
                      "got_inf": math.isinf(const.get("big", 0)),
                      "got_nan": math.isnan(const.get("nan", 0))})


def fails_at_step_two(config):
    train.report({"loss": 1.0})
    train.report({"loss": 0.5})
    raise ValueError("boom at step 2")


def checkpointed(config):
    """Saves its step in every checkpoint; the first attempt kills its own
    process at step 3 (SIGKILL: no Python cleanup), the retry resumes."""
    start = 0
    ckpt = train.get_checkpoint()
    if ckpt is not None:
        with ckpt.as_directory() as d:
            with open(os.path.join(d, "state.json")) as f:
                start = json.load(f)["step"] + 1
    for step in range(start, 5):
        if step == 3 and train.get_context().get_attempt() == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "state.json"), "w") as f:
                json.dump({"step": step}, f)
            train.report({"step": step, "resumed_at": start},
                         checkpoint=train.Checkpoint.from_directory(d))


def slow_or_fast(config):
    """Trials whose loss is their x at every step: ASHA stops the worse ones."""
    for _ in range(config["iterations"]):
        train.report({"loss": float(config["x"])})


def slow_checkpointed(config):
    """Ten slow steps, a checkpoint each; reports where this run started."""
    import time
    start = 0
    ckpt = train.get_checkpoint()
    if ckpt is not None:
        with open(os.path.join(ckpt.path, "state.json")) as f:
            start = json.load(f)["step"] + 1
    for step in range(start, 10):
        time.sleep(0.2)  # a slow step: the run lasts long enough to be interrupted
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "state.json"), "w") as f:
                json.dump({"step": step}, f)
            # The config's non-finite constants, as this run got them.
            train.report({"step": step, "resumed_at": start,
                          "clip": config.get("clip", 0.0),
                          "decay_is_nan": math.isnan(config.get("decay", 0.0))},
                         checkpoint=train.Checkpoint.from_directory(d))


def non_finite(config):
    """Reports NaN and infinities beside its x, and the config's non-finite
    constants as it got them."""
    train.report({"loss": config["x"], "nan": math.nan, "inf": math.inf, "ninf": -math.inf,
                  "nested": {"v": [1.0, math.nan]},
                  "got_inf": math.isinf(config["const"]["big"]),
                  "got_nan": math.isnan(config["const"]["nan"])})


def pbt_member(config):
    """Scores its own lr; its checkpoint remembers which trial's weights it
    holds. With config["when_asked"], it checkpoints only where
    train.should_checkpoint() says the scheduler may act."""
    import time
    owner = train.get_context().get_trial_id()
    ckpt = train.get_checkpoint()
    if ckpt is not None:
        with open(os.path.join(ckpt.path, "owner.json")) as f:
            owner = json.load(f)["owner"]
    for _ in range(8):
        time.sleep(0.05)  # the step's work: PBT acts between the members' steps
        metrics = {"score": config["lr"], "owner": owner}
        if config.get("when_asked") and not train.should_checkpoint():
            train.report(metrics)
            continue
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "owner.json"), "w") as f:
                json.dump({"owner": owner}, f)
            train.report(metrics, checkpoint=train.Checkpoint.from_directory(d))


def stepper(config):
    """config["steps"] steps, a checkpoint each; a restarted run resumes after
    its checkpoint and reports where it started."""
    start = 0
    ckpt = train.get_checkpoint()
    if ckpt is not None:
        with open(os.path.join(ckpt.path, "state.json")) as f:
            start = json.load(f)["step"] + 1
    for step in range(start, config["steps"]):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "state.json"), "w") as f:
                json.dump({"step": step}, f)
            train.report({"loss": float(config["x"]), "step": step, "resumed_at": start},
                         checkpoint=train.Checkpoint.from_directory(d))


class Table:
    """A value tune.with_parameters carries to the workers (by pickle)."""

    def __init__(self, rows):
        self.rows = rows


def with_table(config, table, scale=1):
    train.report({"total": sum(table.rows) * scale + config["x"], "pid": os.getpid()})


class Counter(tune.Trainable):
    """Counts up by config["step"]; checkpoints its count (as a dict when
    config["as_dict"], else as a file); the first attempt of a trial with
    config["crash_at"] kills its own process at that iteration."""

    def setup(self, config, offset=0):
        self.count = offset
        self.restored_from = None
        self.step_size = config["step"]

    def step(self):
        crash_at = self.config.get("crash_at")
        if self.iteration + 1 == crash_at and train.get_context().get_attempt() == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        self.count += self.step_size
        return {"count": self.count, "restored_from": self.restored_from,
                "done": self.count >= self.config.get("until", float("inf"))}

    def save_checkpoint(self, checkpoint_dir):
        if self.config.get("as_dict"):
            return {"count": self.count}
        with open(os.path.join(checkpoint_dir, "count.json"), "w") as f:
            json.dump(self.count, f)

    def load_checkpoint(self, checkpoint):
        if isinstance(checkpoint, dict):
            self.count = checkpoint["count"]
        else:
            with open(os.path.join(checkpoint, "count.json")) as f:
                self.count = json.load(f)
        self.restored_from = self.iteration


def where_am_i(config):
    """Reports how this rank was started: forked from the zygote or exec'd;
    optionally kills the zygote, leaves a child behind, or dies by os._exit."""
    import subprocess
    import sys
    import time
    config = {**config, **config.get("case", {})}
    forked = "tunerun._zygote" in sys.modules
    zygote_pgid = None
    if forked:
        from tunerun import _zygote
        zygote_pgid = os.getpgid(_zygote.zygote_pid())
        if config.get("kill_zygote"):
            os.kill(_zygote.zygote_pid(), signal.SIGKILL)
    if config.get("leave_child"):
        subprocess.Popen(["sleep", str(config["leave_child"])])
    time.sleep(config.get("sleep", 0))  # the rank's work, as long as the case asks
    train.report({"forked": forked, "pid": os.getpid(), "ppid": os.getppid(),
                  "pgid": os.getpgid(0), "cwd": os.getcwd(), "zygote_pgid": zygote_pgid,
                  "env": os.environ.get("RANK_TEST_MARK", ""),
                  "stdout_is_log": os.path.realpath("/proc/self/fd/1").endswith("rank_0.log")})
    print("hello from the rank", flush=True)
    if config.get("exit_code") is not None:
        os._exit(config["exit_code"])


class Resettable(tune.Trainable):
    """Two steps per trial; counts, per process, its setups and cleanups, and
    its own resets; refuses a reset when the new config says so."""
    setups = 0
    cleanups = 0

    def setup(self, config):
        Resettable.setups += 1
        self.resets = 0
        self.value = config["v"]

    def reset_config(self, new_config):
        if new_config.get("refuse"):
            return False
        self.resets += 1
        self.value = new_config["v"]
        return True

    def step(self):
        return {"value": self.value, "setups": Resettable.setups, "resets": self.resets,
                "cleanups": Resettable.cleanups, "pid": os.getpid(), "instance": id(self),
                "trial": self.trial_id, "done": self.iteration + 1 >= 2}

    def cleanup(self):
        Resettable.cleanups += 1


def two_objectives(config):
    """acc grows with x, latency with x and y; x > 0.8 breaks the constraint."""
    x, y = config["x"], config["y"]
    train.report({"acc": x, "latency_ms": 10 * (x + y), "constraints": [x - 0.8]})


def two_objectives_per_step(config):
    x, y = config["x"], config["y"]
    for step in range(8):
        train.report({"acc": x * (step + 1) / 8, "latency_ms": 10 * (x + y)})


def world_size_probe(config):
    """A TorchTrainer's loop: reports its world size and lr."""
    train.report({"world_size": train.get_context().get_world_size(), "lr": config["lr"]})


def reports_anything(config):
    import numpy as np
    train.report({"score": 1, "none": None, "text": "abc", "list": [1, "a", None],
                  "array": np.arange(4).reshape(2, 2), "np_float": np.float64(0.25),
                  "ellipsis": ..., "tuple": (1, 2), "object": object()})


def sleeps(config):
    """Reports the wall-clock window it ran in."""
    import time
    start = time.time()
    time.sleep(0.3)
    train.report({"start": start, "end": time.time()})


def fails_with_the_lowest_loss(config):
    """Reports loss 1 then fails when config["fail"]; else ends at loss 5."""
    train.report({"loss": 1.0 if config["fail"] else 5.0})
    if config["fail"]:
        raise ValueError("failed after its lowest loss")
