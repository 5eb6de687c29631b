"""Tests marked `gpu` run code on a CUDA GPU: they are skipped, with the driver's reason, where none is visible.
`cores(n)` makes the host look as if it had n cores to the passes, for tests whose IR depends on the worker count."""
import os

import pytest

from tfn.passes import target
from tfn.runtime import cuda_driver

# Compiles in the tests verify the module after every pass (compiled functions elsewhere verify it once, after the
# pipeline: passes/registry.py), so that a pass breaking the IR is named.
os.environ.setdefault("TFN_VERIFY_EACH_PASS", "1")


def pytest_collection_modifyitems(config, items):
    state = cuda_driver.probe()
    if state.gpus:
        return
    skip = pytest.mark.skip(reason=f"no GPU visible: {state.reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def cores():
    """cores(n): code generated from now on in the test is for a host of n cores (n workers); the host's own count
    again after it (restored here, not by monkeypatch, whose undo would also take back other fixtures' settings)."""
    real = target._host
    host = real()

    def use(n):
        target._host = lambda: (*host[:2], n, *host[3:])
        target.target_for.cache_clear()
        assert target.current().cores == n

    yield use
    target._host = real
    target.target_for.cache_clear()
