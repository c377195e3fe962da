"""ray.cloudpickle as a module: `import tunerun.cloudpickle as pickle` (the
form PyTorch's Ray Tune tutorial uses) gives Debian's cloudpickle itself."""

import sys

import cloudpickle

sys.modules[__name__] = cloudpickle
