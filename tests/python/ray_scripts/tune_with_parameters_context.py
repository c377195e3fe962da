# After Ray's "How to Use Tune's Trainable API with large data" FAQ
# (doc/source/tune/faq.rst, "How can I pass further parameter values to my
# trainable" and doc/source/tune/doc_code/faq.py __large_data_start__) and the
# TrainContext reference (doc/source/train/api/api.rst): a large numpy array
# through tune.with_parameters, the trial's name, id, directory and world
# size from train.get_context().
import os

import numpy as np

from tunerun import train, tune


def f(config, data=None, scale=1.0):
    ctx = train.get_context()
    trial_dir = ctx.get_trial_dir()
    assert os.path.isdir(trial_dir), trial_dir
    with open(os.path.join(trial_dir, "note.txt"), "w") as fh:
        fh.write(ctx.get_trial_name())
    for i in range(3):
        train.report({"metric": float(data[: config["n"]].sum()) * scale + i,
                      "world_size": ctx.get_world_size(),
                      "world_rank": ctx.get_world_rank(),
                      "local_rank": ctx.get_local_rank(),
                      "trial_name": ctx.get_trial_name(),
                      "trial_id_ctx": ctx.get_trial_id(),
                      "experiment": ctx.get_experiment_name(),
                      "trial_dir": trial_dir})


data = np.random.random(size=3_000_000)  # 24 MB of floats
tuner = tune.Tuner(
    tune.with_parameters(f, data=data, scale=2.0),
    param_space={"n": tune.grid_search([10, 1000, 1_000_000])},
    run_config=train.RunConfig(name="large_data", storage_path=os.path.abspath("res")),
)
results = tuner.fit()
assert results.num_errors == 0, [r.error for r in results]
for r in results:
    m = r.metrics
    assert abs(m["metric"] - (data[: r.config["n"]].sum() * 2.0 + 2)) < 1e-6
    assert m["world_size"] == 1 and m["world_rank"] == 0 and m["local_rank"] == 0
    assert m["trial_id_ctx"] == m["trial_id"]
    assert m["experiment"] == "large_data"
    assert os.path.exists(os.path.join(m["trial_dir"], "note.txt")), m["trial_dir"]
    assert open(os.path.join(m["trial_dir"], "note.txt")).read() == m["trial_name"]
    assert os.path.realpath(r.path) == os.path.realpath(m["trial_dir"])
assert len({r.metrics["trial_name"] for r in results}) == 3
