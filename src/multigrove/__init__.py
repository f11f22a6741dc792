"""multigrove: gradient boosted trees whose trees predict many outputs at once.

Importing has no side effects: no seeding, no thread or Numba configuration, no hardware probing.
"""
from .boosting.booster import Booster
from .boosting.callbacks import (
    CallbackEnv,
    EarlyStopException,
    early_stopping,
    log_evaluation,
    progress_bar,
    record_evaluation,
)
from .boosting.cv import cv
from .boosting.engine import train
from .data.dataset import Dataset
from .params import MultigroveWarning, Params

__version__ = "0.1.0"

__all__ = ["Booster", "CallbackEnv", "Dataset", "EarlyStopException", "MultigroveWarning", "Params", "cv",
           "early_stopping", "log_evaluation", "progress_bar", "record_evaluation", "train", "__version__"]


def __getattr__(name):  # the scikit-learn layer loads on first use
    if name in ("GroveRegressor", "GroveClassifier"):
        from . import sklearn as _sk
        return getattr(_sk, name)
    raise AttributeError(f"module 'multigrove' has no attribute {name!r}")
