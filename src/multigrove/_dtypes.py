"""Every dtype multigrove uses, in one place, with the reason for it.

* ``BIN``: binned feature values.  ``max_bin`` is at most 255 value bins and each feature
  keeps one extra bin (its last) for missing values, so a local bin index fits in a byte.
  One byte per cell keeps the binned matrix 8x smaller than float64 X and makes the
  histogram kernel read 50 features of a row from a single cache line.
* ``STAT``: per-row gradient statistics (gradients, Hessians, the count column).  float32
  halves the memory traffic of histogram construction; the sums are float64.
* ``HIST``: histogram sums and every total derived from them.  Sums of millions of float32
  values lose digits in float32; float64 keeps leaf values reproducible.
* ``SCORE``: raw prediction scores, float64, accumulated over thousands of trees.
* ``INDEX``: row indices inside the grower (n_rows < 2**31).
* ``NODE``: node and feature indices in the tree arrays.
"""
import numpy as np

BIN = np.uint8
STAT = np.float32
HIST = np.float64
SCORE = np.float64
INDEX = np.int32
NODE = np.int32
FEATURE_VALUE = np.float64

#: largest number of value bins per feature (one more bin is kept for missing values)
MAX_VALUE_BINS = 255

#: min_data_in_bin=None: value bins hold one sample row or more while the features' value bins number up to
#: WIDE_HISTOGRAM_BINS in all and up to WIDE_BINS_PER_ROW a sample row, and at least LightGBM's 3 rows beyond
WIDE_HISTOGRAM_BINS = 1 << 20
WIDE_BINS_PER_ROW = 64
WIDE_MIN_DATA_IN_BIN = 3

#: the largest magnitude a weight or a regression target may have: gradient statistics are float32
#: (largest 3.4e38), and a weight times a gradient must stay finite
STAT_INPUT_LIMIT = 1e30
