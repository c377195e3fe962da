"""A trial's rank: `python3 -m tunerun._worker REF` (REF: _reference.encode's
text; tunerun starts it as _reference.worker_argv says).

Unpickles the trainable the driver wrote (tunerun/_reference.py), registers
it with the C++ worker runtime and runs the runtime's loop (HELLO, START,
the function, DONE or ERROR; with reuse_actors, the next trial's START). A
Python exception in the function prints its traceback to the rank's log,
saves it for Result.error (_save_error) and fails the trial with
"Type: message". A dict the function returns is its last result, and a
report with done=True ends the trial there (as Ray's function trainables).

pickle, inspect, traceback and tune.trainable are imported where used: a
function trainable's rank starts without them (tune.trainable's json, pickle
and tempfile alone would double the imports of a bare rank).
"""

import os
import sys

from tunerun import _rank_context, _reference, _tunerun
from tunerun.train import session as _session

def _teardown_process_group():
    # A reused rank meets the next trial's group at a new MASTER_PORT.
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _parameters(ref):
    """tune.with_parameters' keyword arguments, unpickled once per process."""
    if "kwargs" not in _parameter_cache:
        _parameter_cache["kwargs"] = _reference.load_parameters(ref)
    return _parameter_cache["kwargs"]


_parameter_cache = {}


def _with_checkpoint_dir(func, kwargs):
    """Ray 1.x's function signature f(config, checkpoint_dir=None): the
    directory of the checkpoint the trial resumes from, or None."""
    code = getattr(func, "__code__", None)
    if code is None or "checkpoint_dir" in kwargs or "checkpoint_dir" not in \
            code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return kwargs
    checkpoint = _session.get_checkpoint()
    return {**kwargs, "checkpoint_dir": checkpoint.path if checkpoint else None}


def _set_torchrun_env(context):
    """RANK, LOCAL_RANK... in os.environ as torchrun sets them, from the
    runtime's context. The runtime sets them in the C environment, which
    os.environ (read once at start-up) does not see: a Slurm step's tasks
    start with one environment and learn their ranks from SLURM_PROCID."""
    os.environ.update({
        "RANK": str(context["world_rank"]),
        "WORLD_SIZE": str(context["world_size"]),
        "LOCAL_RANK": str(context["local_rank"]),
        "LOCAL_WORLD_SIZE": str(context["local_world_size"]),
        "GROUP_RANK": str(context["node_rank"]),
    })


def _wrap(func, ref):
    kind = ref["kind"]
    takes_config = True
    if kind == "trainer":
        import inspect
        takes_config = len(inspect.signature(func).parameters) > 0

    chdir = ref.get("chdir", False)
    initial_checkpoint = ref.get("resume_from_checkpoint")

    objects = _reference.load_objects(ref)

    def call(config):
        # Lists holding domains come as dicts (tune/_values.py), objects as
        # placeholders: both are put back.
        from tunerun.tune import _values
        if objects is not None:
            import pickle
            config = _values.decode(config, _reference._with_site(
                lambda: pickle.loads(objects), ref))
        else:
            config = _values.decode(config, [])
        _session._drop_pending()
        _set_torchrun_env(_tunerun.get_context())
        _rank_context.start_trial(initial_checkpoint=initial_checkpoint,
                                  bundles=ref.get("bundles"),
                                  torch_config=ref.get("torch_config"))
        if chdir:  # TuneConfig(chdir_to_trial_dir=True), as Ray's
            cwd = os.getcwd()
            os.chdir(_tunerun.get_context()["trial_dir"])
        try:
            if kind == "trainer":
                if "parameters" in ref:  # TorchTrainer(datasets=)
                    parameters = _parameters(ref)
                    _rank_context.set_datasets(parameters["datasets"],
                                               parameters.get("unsplit", ()))
                loop_config = config.get("train_loop_config", {})
                func(loop_config) if takes_config else func()
            elif kind == "class":
                from tunerun.tune.trainable import run_class
                run_class(func, config, _parameters(ref), ref.get("options", {}))
            else:
                _final_result(func(config, **_with_checkpoint_dir(func, _parameters(ref))))
        except _tunerun.StopTrial:
            raise
        except _session.TrialDone:
            pass  # the function reported done=True: the trial ended as Ray's does
        except BaseException as error:
            import traceback
            traceback.print_exc()
            _save_error(error)
            raise
        finally:
            if chdir:
                os.chdir(cwd)
            _teardown_process_group()
            sys.stdout.flush()
            sys.stderr.flush()

    return call


ERROR_FILE = "error_rank{}.pkl"


def _save_error(error):
    """What the driver makes Result.error of (tune/error.py): the exception
    (cloudpickle, when it pickles), its "Type: message" as the trial's error
    says it, and its traceback, in <trial_dir>/error_rank<N>.pkl."""
    import pickle
    import traceback
    try:
        import cloudpickle
        exception = cloudpickle.dumps(error)
    except Exception:
        exception = None
    text = str(error)
    name = type(error).__name__
    record = {"exception": exception, "text": f"{name}: {text}" if text else name,
              "traceback": "".join(traceback.format_exception(error))}
    context = _tunerun.get_context()
    path = os.path.join(context["trial_dir"], ERROR_FILE.format(context["world_rank"]))
    try:
        _reference.write_atomically(path, pickle.dumps(record))
    except OSError:
        pass  # the trial's error still says what was raised, without the traceback


def _final_result(returned):
    """Ray's function trainable: a returned dict is the trial's last result."""
    if isinstance(returned, dict):
        try:
            _session.report(returned)
        except _session.TrialDone:
            pass
    elif returned is not None:
        raise TypeError(f"the trainable returned {returned!r}: a function trainable returns "
                        "None or a dict (its final result)")


def _unresolved(error):
    """A trainable that raises what loading the real one raised (a module the
    rank cannot import), so that error is the trial's, not "rank 0 exited
    with code 1"."""

    def trainable(*args, **kwargs):
        raise error

    return trainable


def main(argv):
    """Runs this process's rank; returns its exit code."""
    if len(argv) != 2:
        print("usage: python3 -m tunerun._worker REFERENCE (started by tunerun, not by hand)",
              file=sys.stderr)
        return 2
    ref = _reference.decode(argv[1])
    _reference.use_sys_path(ref)
    try:
        func = _reference.load(ref)
    except Exception as error:
        import traceback
        traceback.print_exc()
        func = _unresolved(error)
    _tunerun.register_trainable(ref["name"], _wrap(func, ref))
    code = _tunerun.run_worker()
    sys.stdout.flush()
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    # Run as a module: make this module's state the one `tunerun._worker` imports see.
    sys.modules["tunerun._worker"] = sys.modules[__name__]
    sys.exit(main(sys.argv))
