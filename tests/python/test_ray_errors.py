"""Ray's error behaviour for a trainable the trial's process cannot load:
the trial fails with the Python error that loading it raised (Ray shows the
exception), not with a bare exit code."""

import subprocess
import sys
import textwrap


def test_an_unresolvable_trainable_fails_its_trial_with_the_error(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from tunerun import train, tune

        class Unpicklable:  # the trial's process cannot build it again
            def __reduce__(self):
                return (eval, ("undefined_name",))

        thing = Unpicklable()

        def train_func(config):
            train.report({"x": thing is not None})

        grid = tune.Tuner(train_func, run_config=tune.RunConfig(
            name="e", storage_path="runs", verbose=0)).fit()
        print("TRIAL ERROR:", grid.errors[0])
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("TRIAL ERROR:"))
    assert "NameError" in line and "undefined_name" in line
    assert "exited with code" not in line


def run_script(tmp_path, source):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_torch_trainer_fit_raises_training_failed_error_with_the_ranks_traceback(tmp_path):
    out = run_script(tmp_path, """
        from tunerun import train
        from tunerun.train import ScalingConfig
        from tunerun.train.base_trainer import TrainingFailedError
        from tunerun.train.torch import TorchTrainer

        def train_func(config):
            if train.get_context().get_world_rank() == 1:
                raise ValueError("rank one broke")
            train.report({"loss": 1.0})

        trainer = TorchTrainer(train_func, scaling_config=ScalingConfig(num_workers=2),
                               run_config=train.RunConfig(storage_path="runs", verbose=0))
        try:
            result = trainer.fit()
            print("returned", result)
        except TrainingFailedError as e:
            print("raised", "ValueError: rank one broke" in str(e),
                  'in train_func\\n    raise ValueError("rank one broke")' in str(e),
                  isinstance(e.__cause__, ValueError), train.TrainingFailedError is type(e))
    """)
    assert "returned" not in out
    assert "raised True True True True" in out


def test_result_error_is_the_ranks_exception_type_with_its_traceback(storage):
    from tunerun import train, tune

    import trainables
    grid = tune.Tuner(trainables.fails_at_step_two,
                      run_config=train.RunConfig(name="fails", storage_path=storage,
                                                 verbose=0)).fit()
    (error,) = grid.errors
    assert grid[0].error is error
    assert isinstance(error, ValueError) and isinstance(error, tune.TuneError)
    assert isinstance(error.cause, ValueError) and str(error.cause) == "boom at step 2"
    text = str(error)
    assert text.startswith("rank 0 of trial fails_00000: ValueError: boom at step 2")
    assert "Traceback (most recent call last)" in text and "in fails_at_step_two" in text

    # No Python exception (the rank exited): a TuneError with the trial's message.
    grid = tune.Tuner(trainables.where_am_i, param_space={"exit_code": 3},
                      run_config=train.RunConfig(name="exits", storage_path=storage,
                                                 verbose=0)).fit()
    (error,) = grid.errors
    assert type(error) is tune.TrialError and isinstance(error, tune.error.TuneError)
    assert "exited with code 3" in str(error) and error.cause is None


def test_train_torch_is_an_attribute_of_train_in_a_rank(tmp_path):
    out = run_script(tmp_path, """
        from tunerun import train, tune

        def uses_train_torch(config):
            train.report({"device": str(train.torch.get_device())})

        grid = tune.Tuner(uses_train_torch, run_config=train.RunConfig(
            storage_path="runs", verbose=0)).fit()
        print("result", grid[0].status, grid[0].metrics.get("device"))
    """)
    assert "result TERMINATED cpu" in out
