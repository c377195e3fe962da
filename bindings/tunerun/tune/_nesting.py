"""A fit() inside a trial: a Tuner, or a TorchTrainer's fit(), called by a
trainable in its rank (Ray Train's "train driver" function, and what a
per-trial ScalingConfig runs, tune/_per_trial_scaling.py).

Its controller runs in the rank, with its own ranks, rendezvous and control
channel (nothing of the outer trial's reaches them), and holds no more than
the trial holds: its resources are the sum of the trial's bundles
(tune.with_resources(fn, ScalingConfig(...)) or a PlacementGroupFactory), so
the outer experiment counts them. A nested group larger than that is a
ValueError naming both; tunerun.init(num_cpus=) inside the trial lifts the
bound. Its ranks run on this machine unless its RunConfig.cluster says.

Reporting back: the trial's own train.report() (the driver function's), or
tune.integration.ray_train.TuneReportCallback given to the nested run, which
reports each of its results to the trial as Ray's does."""

from tunerun import _rank_context, _tunerun

# Keys the controller adds to every result; a result forwarded to the outer
# trial gets its own.
AUTO_FILLED = ("training_iteration", "time_this_iter_s", "time_total_s", "timestamp", "date",
               "pid", "trial_id", "iterations_since_restore", "done", "hostname", "node_ip")


def in_trial():
    """True in a rank while it runs a trial (the trainable's code)."""
    return _rank_context.bundles() is not None and _tunerun.is_worker()


def trial_holding():
    """{"cpus": n, "gpus": m}: what the calling trial holds, or None outside a trial."""
    if not in_trial():
        return None
    bundles = _rank_context.bundles()
    return {"cpus": sum(b.get("CPU", 0) for b in bundles),
            "gpus": int(sum(b.get("GPU", 0) for b in bundles))}


def bound_resources(spec, trainable_spec, explicit):
    """Inside a trial: the nested experiment's resources become the trial's
    (unless tunerun.init() in the trial set them, `explicit`), and a trial
    of it that needs more is refused here, with what to change."""
    holding = trial_holding()
    if holding is None or explicit:
        return
    workers = trainable_spec["num_workers"]
    workers = workers[-1] if isinstance(workers, list) else workers
    need = {"cpus": trainable_spec["cpus_per_worker"] * workers,
            "gpus": trainable_spec["gpus_per_worker"] * workers}
    short = [f"{need[k]:g} {k[:-1].upper()}s (the trial holds {holding[k]:g})"
             for k in ("cpus", "gpus") if need[k] > holding[k]]
    if short:
        context = _tunerun.get_context()
        raise ValueError(
            f"a fit() inside trial {context['trial_id']} runs {workers} ranks needing "
            f"{' and '.join(short)}; the trial's resources must hold its nested group: "
            f"tune.with_resources(trainable, ScalingConfig(num_workers={workers}, ...)) or a "
            "PlacementGroupFactory with a bundle per rank")
    spec["resources"] = dict(holding)


def default_launcher(cluster):
    """Inside a trial, ranks of a nested run start on this machine unless its
    RunConfig (or tunerun.init() in the trial) names a launcher."""
    if in_trial() and cluster.launcher is None:
        import dataclasses
        return dataclasses.replace(cluster, launcher="local")
    return cluster
