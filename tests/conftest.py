import numpy as np
import pytest

from multigrove.datasets import data_dir


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def shared_data_or_skip(name: str):
    root = data_dir()
    if root is None or not (root / name).is_dir():
        pytest.skip(f"shared data set {name!r} not present")
    return root
