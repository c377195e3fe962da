# Ray's train.get_context()/tune.get_context() outside a trial (Ray 2.x's
# TrainContext getters warn and return None there), as users call them in
# code shared between a trainable and the driver.
import warnings

from tunerun import train, tune


def describe():
    context = tune.get_context()
    return context.get_trial_name(), context.get_world_rank()


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert describe() == (None, None)
assert caught, "expected a warning outside a trial"


def trainable(config):
    name, rank = describe()
    train.report({"named": name is not None, "rank": rank})


result = tune.Tuner(trainable).fit()[0]
assert result.metrics["named"] is True and result.metrics["rank"] == 0
