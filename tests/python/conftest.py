"""The Python tests run against the build tree's package:
PYTHONPATH=build/bindings /usr/bin/python3 -m pytest tests/python (CTest sets it)."""

import os

import pytest


@pytest.fixture
def storage(tmp_path):
    return str(tmp_path / "runs")


# Scripts the tests run as subprocesses (from other directories) import the
# same package: PYTHONPATH's entries made absolute.
os.environ["PYTHONPATH"] = os.pathsep.join(
    os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
