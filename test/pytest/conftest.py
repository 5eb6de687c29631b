"""Tests marked `gpu` run code on a CUDA GPU: they are skipped, with the driver's reason, where none is visible."""
import pytest

from tfn.runtime import cuda_driver


def pytest_collection_modifyitems(config, items):
    state = cuda_driver.probe()
    if state.gpus:
        return
    skip = pytest.mark.skip(reason=f"no GPU visible: {state.reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
