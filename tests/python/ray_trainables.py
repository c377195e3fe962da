"""Trainables of the Ray compatibility tests, written as Ray's user guides
write them: top-level functions of an importable module."""

from tunerun import train, tune


def returns_score(config):
    """Ray's quick start: the returned dict is the final result."""
    return {"score": config["a"] ** 2 + config["b"]}


def reports_then_returns(config):
    for step in range(3):
        train.report({"score": step, "final": False})
    return {"score": 100, "final": True}


def reports_done_early(config):
    """Reports done=True at step 2; Ray ends the trial there."""
    for step in range(10):
        train.report({"step": step, "done": step == 2})


def returns_nothing(config):
    for step in range(2):
        train.report({"step": step})


def converges_at_step_one(config):
    for step in range(10):
        train.report({"step": step, "converged": step >= 1})


def parabola(config):
    """Ray's search-algorithm guide's objective: a score to maximise, one per step."""
    for step in range(config.get("steps", 4)):
        train.report({"score": -((config["x"] - 3) ** 2) + step, "step": step})


def plateau(config):
    """The loss stops improving after step 3; runs 20 steps unless stopped."""
    for step in range(20):
        train.report({"loss": 1.0 / (min(step, 3) + 1)})


def checkpoints_with_metadata(config):
    """Ray's checkpointing guide: a checkpoint per step, with metadata."""
    import tempfile
    for step, accuracy in enumerate([0.1, 0.9, 0.5, 0.3]):
        with tempfile.TemporaryDirectory() as d:
            checkpoint = train.Checkpoint.from_directory(d)
            checkpoint.set_metadata({"step": step})
            checkpoint.update_metadata({"seen": accuracy})
            train.report({"accuracy": accuracy}, checkpoint=checkpoint)


def reports_its_directory(config):
    import os
    train.report({"cwd": os.getcwd(), "trial_dir": train.get_context().get_trial_dir()})


def reads_its_first_checkpoint(config):
    """A train loop that resumes from train.get_checkpoint() when there is one."""
    import json
    import os
    checkpoint = train.get_checkpoint()
    start = None
    if checkpoint is not None:
        with open(os.path.join(checkpoint.path, "state.json")) as f:
            start = json.load(f)["epoch"]
    train.report({"start": start, "rank": train.get_context().get_world_rank()})


def reports_its_resources(config):
    resources = train.get_context().get_trial_resources()
    train.report({"required": resources.required_resources, "bundles": len(resources.bundles)})


def fails_while_flagged(config):
    """Raises while the file config["flag"] exists, else reports its x."""
    import os
    if os.path.exists(config["flag"]):
        raise RuntimeError("flagged to fail")
    train.report({"score": config["x"]})


def reads_its_dataset_shard(config):
    """Every rank gathers what its shard of "train" holds, and what its
    process group runs on; rank 0 reports all ranks' views."""
    import torch
    import torch.distributed as dist

    from tunerun.train.torch import prepare_model
    prepare_model(torch.nn.Linear(1, 1))  # joins the process group
    shard = train.get_dataset_shard("train")
    xs = [int(v) for batch in shard.iter_torch_batches(batch_size=2) for v in batch["x"]]
    seen = [None] * dist.get_world_size()
    dist.all_gather_object(seen, xs)
    train.report({"shards": seen, "backend": dist.get_backend(),
                  "batches": len(list(shard.iter_batches(batch_size=2, drop_last=True)))})


def air_session_counter(config):
    """A Ray 2.0-2.6 function: ray.air.session and dict checkpoints. Counts to
    5, resuming from its checkpoint's dict; fails once at step 3 while the
    file config["flag"] exists."""
    import os

    from tunerun.air import session
    from tunerun.air.checkpoint import Checkpoint
    step = 0
    checkpoint = session.get_checkpoint()
    if checkpoint is not None:
        step = checkpoint.to_dict()["step"]
    while step < 5:
        step += 1
        if step == 3 and os.path.exists(config["flag"]):
            os.remove(config["flag"])
            raise RuntimeError("failing once at step 3")
        session.report({"step": step, "world_size": session.get_world_size(),
                        "name": session.get_trial_name()},
                       checkpoint=Checkpoint.from_dict({"step": step}))


def reports_a_torch_checkpoint(config):
    """Ray 2.x's TorchCheckpoint.from_state_dict, reported with the model's
    weight sum."""
    import torch

    from tunerun.train.torch import TorchCheckpoint
    torch.manual_seed(config["seed"])
    model = torch.nn.Linear(2, 1)
    train.report({"weight_sum": float(model.weight.sum() + model.bias.sum())},
                 checkpoint=TorchCheckpoint.from_state_dict(model.state_dict()))


class SavesAFilePath(tune.Trainable):
    """Ray 2.0-2.6's class checkpoint: save_checkpoint returns a file inside
    its directory (state/count.txt), load_checkpoint gets that file's path.
    Counts to 4; fails once at 3 while the file config["flag"] exists."""

    def setup(self, config):
        self.count = 0
        self.loaded = None

    def step(self):
        import os
        self.count += 1
        if self.count == 3 and os.path.exists(self.config["flag"]):
            os.remove(self.config["flag"])
            raise RuntimeError("failing once at 3")
        return {"count": self.count, "loaded": self.loaded, "done": self.count == 4}

    def save_checkpoint(self, checkpoint_dir):
        import os
        os.makedirs(os.path.join(checkpoint_dir, "state"))
        path = os.path.join(checkpoint_dir, "state", "count.txt")
        with open(path, "w") as f:
            f.write(str(self.count))
        return path

    def load_checkpoint(self, checkpoint_path):
        import os
        with open(checkpoint_path) as f:
            self.count = int(f.read())
        self.loaded = "/".join(checkpoint_path.split(os.sep)[-2:])


class AsksForACheckpoint(tune.Trainable):
    """Returns should_checkpoint=True (Ray's tune.result.SHOULD_CHECKPOINT)
    from its second step only."""

    def step(self):
        return {"should_checkpoint": self.iteration == 1}

    def save_checkpoint(self, checkpoint_dir):
        return {"at": self.iteration}


def ray1_checkpoint_dir(config, checkpoint_dir=None):
    """Ray 1.x's function checkpoints: resumes from checkpoint_dir's count,
    writes one with tune.checkpoint_dir before each tune.report(**metrics).
    Counts to 5; fails once at 3 while the file config["flag"] exists."""
    import json
    import os
    count = 0
    if checkpoint_dir:
        with open(os.path.join(checkpoint_dir, "count.json")) as f:
            count = json.load(f)["count"]
    resumed_at = count
    while count < 5:
        count += 1
        if count == 3 and os.path.exists(config["flag"]):
            os.remove(config["flag"])
            raise RuntimeError("failing once at 3")
        with tune.checkpoint_dir(step=count) as d:
            with open(os.path.join(d, "count.json"), "w") as f:
                json.dump({"count": count}, f)
        tune.report(count=count, resumed_at=resumed_at)


def elastic_steps(config):
    """An elastic train loop: resumes from its checkpoint at whatever world
    size it gets, and reports the world size it saw (as "seen")."""
    import json
    import os
    import tempfile
    import time
    context = train.get_context()
    start = 0
    checkpoint = train.get_checkpoint()
    if checkpoint is not None:
        with open(os.path.join(checkpoint.path, "state.json")) as f:
            start = json.load(f)["step"]
    for step in range(start + 1, config["steps"] + 1):
        time.sleep(config["sleep_s"])  # the step's work, as long as the case asks
        with tempfile.TemporaryDirectory() as d:
            saved = None
            if context.get_world_rank() == 0:
                with open(os.path.join(d, "state.json"), "w") as f:
                    json.dump({"step": step}, f)
                saved = train.Checkpoint.from_directory(d)
            train.report({"step": step, "seen": context.get_world_size()}, checkpoint=saved)


def reads_args_lr(config):
    """Ray's mnist_pytorch_trainable reads its flags from config["args"]."""
    train.report({"score": config["args"].lr * config["x"]})
