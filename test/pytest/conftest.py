"""Tests marked `gpu` run code on a CUDA GPU: they are skipped, with the driver's reason, where none is visible."""
import os

import pytest

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
