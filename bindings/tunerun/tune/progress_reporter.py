"""Ray's ray.tune.progress_reporter module: the reporters of tune/progress.py."""

from tunerun.tune.progress import (CLIReporter, JupyterNotebookReporter,  # noqa: F401
                                   ProgressReporter)
