from .binning import BinMapper
from .dataset import Dataset

__all__ = ["BinMapper", "Dataset"]
