# After Ray 1.x/2.x tune.run scripts that resume (users' repositories, and
# Ray's "How to Enable Fault Tolerance" guide before Tuner.restore:
# tune.run(..., name=, resume="AUTO"), resume="ERRORED_ONLY" and
# log_to_file=True): a first run where a trial fails, then the same call with
# resume continuing it from its checkpoint.
import json
import os
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint

flag = os.path.abspath("fail_once")
open(flag, "w").close()


def train_fn(config):
    start = 0
    ckpt = train.get_checkpoint()
    if ckpt:
        with ckpt.as_directory() as d:
            start = json.load(open(os.path.join(d, "s.json")))["i"] + 1
    for i in range(start, 5):
        if i == 2 and config["x"] == 3 and os.path.exists(flag):
            os.remove(flag)
            raise RuntimeError("preempted")
        with tempfile.TemporaryDirectory() as tmp:
            json.dump({"i": i}, open(os.path.join(tmp, "s.json"), "w"))
            train.report({"score": config["x"] * 10 + i, "i": i},
                         checkpoint=Checkpoint.from_directory(tmp))


kwargs = dict(config={"x": tune.grid_search([1, 2, 3])}, name="resumable",
              storage_path=os.path.abspath("ray_results"), metric="score", mode="max",
              log_to_file=True, verbose=1)
analysis = tune.run(train_fn, resume="AUTO", raise_on_failed_trial=False, **kwargs)
assert sum(t.status == "ERROR" for t in analysis.trials) == 1
assert analysis.best_config["x"] == 2

analysis = tune.run(train_fn, resume="AUTO+ERRORED_ONLY", **kwargs)
assert all(t.status == "TERMINATED" for t in analysis.trials), analysis.trials
assert analysis.best_config["x"] == 3
assert analysis.best_result["i"] == 4
df = analysis.trial_dataframes
assert sorted(len(d) for d in df.values()) == [5, 5, 5], [list(d["i"]) for d in df.values()]

try:
    tune.run(train_fn, resume="LOCAL", **dict(kwargs, name="never_ran"))
except ValueError as e:
    print("as expected:", e)
else:
    raise AssertionError("resume=LOCAL of a missing experiment should fail")
