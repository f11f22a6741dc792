"""Small wrappers that call the real kernels the way the tests describe their inputs."""
import numpy as np

from multigrove.data.storage import dense_store
from multigrove.kernels.split import FeatureSplits, ScanParams, best_split_per_feature, scan_scratch


def scan_params(k, h_col, h_stride, h_scale, count_col, lam=0.0, min_data=1, min_hess=0.0, topk=0,
                restricted=False, min_gain=0.0):
    return ScanParams(k=k, h_col=h_col, h_stride=h_stride, h_scale=float(h_scale), count_col=count_col,
                      lambda_l2=float(lam), min_data_in_leaf=int(min_data), min_sum_hessian=float(min_hess),
                      min_gain_to_split=float(min_gain), topk=int(topk), restricted=bool(restricted))


def scan(hist, offsets, total, params, mask=None):
    """(gain, bin, default_left) per feature of one node's histogram, from the real kernel."""
    offsets = np.asarray(offsets, dtype=np.int64)
    F = offsets.size - 1
    mask = np.ones(F, np.bool_) if mask is None else mask
    out = FeatureSplits.allocate(1, F)
    hist = np.ascontiguousarray(hist, dtype=np.float64)
    totals = np.asarray(total, np.float64).reshape(1, -1)
    best_split_per_feature(hist, hist, False, np.ones(1, np.bool_), totals, offsets, mask, params, None,
                           scan_scratch(hist.shape[1], params), out)
    return out.gain[0], out.threshold_bin[0], out.default_left[0]


def store_of(binned, offsets):
    """A dense store over an (n, F) bin matrix whose feature f has offsets[f+1]-offsets[f]-1 value bins."""
    offsets = np.asarray(offsets, dtype=np.int64)
    return dense_store(binned, offsets, (np.diff(offsets) - 1).astype(np.int32))
