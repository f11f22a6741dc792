"""Extreme multi-label tooling: data formats (``io``), ranking metrics (``metrics``) and Bonsai label
trees (``LabelTreeClassifier``).  Never imports multigrove.boosting."""
from . import io, metrics

__all__ = ["io", "metrics", "LabelTreeClassifier"]


def __getattr__(name):  # the estimator (and scikit-learn) load on first use
    if name == "LabelTreeClassifier":
        from .model import LabelTreeClassifier
        return LabelTreeClassifier
    raise AttributeError(f"module 'multigrove.xmc' has no attribute {name!r}")
