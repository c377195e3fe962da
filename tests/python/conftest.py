"""The Python tests run against the build tree's package:
PYTHONPATH=build/bindings /usr/bin/python3 -m pytest tests/python (CTest sets it)."""

import pytest


@pytest.fixture
def storage(tmp_path):
    return str(tmp_path / "runs")
