"""Compile every kernel of ``multigrove.kernels.cuda``, ``cuda_scan``, ``cuda_categorical`` and ``cuda_rows`` to PTX
for a real GPU (compute capability 9.0), with the argument types the CUDA builder and the device training shard
pass.  Run by ``test_cuda_ptx.py`` in a process of its own: without ``NUMBA_ENABLE_CUDASIM`` and with ``CUDA_HOME``
at the NVVM compiler of the ``nvidia-cuda-nvcc-cu12`` wheel.  No GPU is needed; the simulator, which runs the kernels
as Python, accepts code that the CUDA compiler rejects (``min`` of an int32 and an int64, ``max`` of two floats)."""
import sys
import types as pytypes

import numba.cuda.api
import numba.cuda.dispatcher
import numpy as np
from numba import cuda, typeof, types

from multigrove.kernels import cuda as kernels
from multigrove.kernels import cuda_categorical, cuda_rows, cuda_scan

CAPABILITY = (9, 0)


def _array(*shape, dtype=np.int64):
    return typeof(np.zeros(shape, dtype))


I8, I32, F32, F64 = np.uint8, np.int32, np.float32, np.float64
SIGNATURES = {  # as boosting/cuda_builder.py launches them
    "zero_histogram": (_array(4, 3, dtype=F64), types.int64),
    "zero_slots": (_array(4, 3, dtype=F64), _array(4, 4), types.int64, types.int64),
    "histogram_tiles": (_array(4, 3, dtype=I8), _array(3), _array(4, dtype=I32), _array(4, 3, dtype=F32),
                        _array(2, 6), _array(4, 4), types.int64, types.int64, _array(4, 3, dtype=F64)),
    "count_sides": (_array(4, 3, dtype=I8), _array(4, dtype=I32), _array(4, 8), types.int64,
                    _array(3, dtype=np.bool_), _array(4, dtype=I8), _array(2)),
    "scatter_sides": (_array(4, dtype=I32), _array(4, 8), types.int64, _array(4, dtype=I8), _array(2),
                      _array(4, dtype=I32), _array(1)),
    "copy_shares": (_array(4, dtype=I32), _array(4, dtype=I32), _array(4, 8), types.int64),
}
SCAN_SIGNATURES = {  # as boosting/cuda_histograms.py launches them
    "subtract_slots": (_array(8, 3, dtype=F64), _array(2, 2), types.int64),
    "subtract_and_prefix": (_array(8, 3, dtype=F64), _array(2, 14, dtype=F64), _array(5), types.int64,
                            _array(8, 3, dtype=F64)),
    "threshold_scores": (_array(8, 3, dtype=F64), _array(8, 3, dtype=F64), _array(2, 14, dtype=F64), _array(5),
                         _array(4), _array(4), _array(11, dtype=F64), types.int64, _array(32, dtype=F64),
                         _array(16, dtype=F64), _array(16, dtype=I8)),
    "node_scores": (_array(2, 14, dtype=F64), _array(11, dtype=F64), types.int64, _array(4, dtype=F64),
                    _array(2, dtype=F64)),
    "choose_splits": (_array(8, 3, dtype=F64), _array(8, 3, dtype=F64), _array(2, 14, dtype=F64), _array(5),
                      _array(11, dtype=F64), types.int64, _array(16, dtype=F64), _array(16, dtype=I8),
                      _array(32, dtype=F64), _array(4), _array(2, 1, dtype=F64), _array(2, 1, dtype=I8),
                      _array(2, 1, 3, dtype=I8), _array(2, 4, dtype=F64), _array(2, 4), _array(2, 12, dtype=F64)),
    "level_gains": (_array(5), types.int64, _array(16, dtype=F64), _array(2, dtype=F64), _array(2, 4, dtype=F64)),
    "split_sums": (_array(8, 3, dtype=F64), _array(8, 3, dtype=F64), _array(2, 14, dtype=F64), types.int64,
                   types.int64, types.int64, types.int64, types.int64, _array(2, 3, dtype=F64)),
}
CATEGORICAL_SIGNATURES = {  # as boosting/cuda_histograms.py launches it
    "categorical_scores": (_array(8, 3, dtype=F64), _array(2, 14, dtype=F64), _array(5), _array(11, dtype=F64),
                           _array(11, dtype=F64), _array(4, dtype=F64), _array(1), types.int64, _array(4, dtype=F64),
                           _array(2, 3, dtype=F64), _array(2, 8, dtype=F64), _array(2, 1, dtype=F64),
                           _array(2, 1, dtype=I8), _array(2, 1, 3, dtype=I8)),
}
ROW_SIGNATURES = {  # as boosting/cuda_shard.py launches them
    "residual": (_array(4, 3, dtype=F64), _array(4, 3, dtype=F64), _array(3, dtype=F64), _array(3, dtype=F64),
                 _array(4, 4, dtype=F32)),
    "softmax_grad_hess": (_array(4, 3, dtype=F64), _array(4), _array(4, 7, dtype=F32), types.int64),
    "sigmoid_grad_hess": (_array(4, 3, dtype=F64), _array(4, 3, dtype=F64), _array(4, 7, dtype=F32), types.int64),
    "scale_rows_by": (_array(4, 7, dtype=F32), _array(4, dtype=F32), types.int64, types.int64),
    "scale_rows": (_array(4, 3, dtype=F32), _array(2, dtype=I32), types.int64, types.float32),
    "mask_cells": (_array(4, 7, dtype=F32), types.int64, _array(4, 3, dtype=F32)),
    "fill_cells": (_array(4, 7, dtype=F32), types.int64, types.int64, _array(4, 1, dtype=F32)),
    "zero_columns": (_array(4, 7, dtype=F32), _array(2)),
    "row_sq_norms": (_array(4, 7, dtype=F32), types.int64, _array(4, dtype=F32)),
    "gather_columns": (_array(4, 7, dtype=F32), types.int64, _array(2), _array(2, dtype=F32),
                       _array(4, 5, dtype=F32), types.int64),
    "project_rows": (_array(4, 7, dtype=F32), types.int64, _array(2, 3, dtype=F32), _array(4, 4, dtype=F32),
                     types.int64),
    "times_matrix": (_array(4, 7, dtype=F32), _array(3, 2, dtype=F32), _array(4, 2, dtype=F32)),
    "transposed_products": (_array(4, 7, dtype=F32), _array(4, 2, dtype=F32), _array(2, 4), _array(3, 2, dtype=F64)),
    "transposed_diagonal": (_array(4, 7, dtype=F32), _array(2, 4), _array(3, dtype=F64)),
    "segment_sums": (_array(4, dtype=I32), _array(4, 3, dtype=F32), _array(2, 4), _array(2, 3, dtype=F64)),
    "add_leaf_values": (_array(4, dtype=I32), _array(2, 4), _array(2, 3, dtype=F64), types.int64,
                        _array(2, 3, dtype=I32), _array(4, 3, dtype=F64)),
}


def main() -> int:
    # a device function's compilation asks the current device for its capability: answer without a GPU
    def device():
        return pytypes.SimpleNamespace(compute_capability=CAPABILITY)
    numba.cuda.api.get_current_device = numba.cuda.dispatcher.get_current_device = device
    for module, signatures in ((kernels, SIGNATURES), (cuda_scan, SCAN_SIGNATURES),
                               (cuda_categorical, CATEGORICAL_SIGNATURES), (cuda_rows, ROW_SIGNATURES)):
        launched = {name for name, value in vars(module).items()
                    if isinstance(value, numba.cuda.dispatcher.CUDADispatcher)
                    and not value.targetoptions.get("device")}
        if launched != set(signatures):
            print(f"kernels of {module.__name__}: {sorted(launched)}; signatures here: {sorted(signatures)}")
            return 1
        for name, signature in signatures.items():
            ptx, _ = cuda.compile_ptx(getattr(module, name).py_func, signature, cc=CAPABILITY)
            print(name, "compiled", len(ptx), "characters of PTX")
    return 0


if __name__ == "__main__":
    sys.exit(main())
