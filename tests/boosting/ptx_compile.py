"""Compile every kernel of ``multigrove.kernels.cuda`` to PTX for a real GPU (compute capability 9.0), with
the argument types the CUDA builder passes.  Run by ``test_cuda_ptx.py`` in a process of its own: without
``NUMBA_ENABLE_CUDASIM`` and with ``CUDA_HOME`` at the NVVM compiler of the ``nvidia-cuda-nvcc-cu12`` wheel.
No GPU is needed; the simulator, which runs the kernels as Python, accepts code that the CUDA compiler
rejects (``min`` of an int32 and an int64, for one)."""
import sys
import types as pytypes

import numba.cuda.api
import numba.cuda.dispatcher
import numpy as np
from numba import cuda, typeof, types

from multigrove.kernels import cuda as kernels

CAPABILITY = (9, 0)


def _array(*shape, dtype=np.int64):
    return typeof(np.zeros(shape, dtype))


I8, I32, F32, F64 = np.uint8, np.int32, np.float32, np.float64
SIGNATURES = {  # as boosting/cuda_builder.py launches them
    "zero_histogram": (_array(4, 3, dtype=F64), types.int64),
    "histogram_tiles": (_array(4, 3, dtype=I8), _array(3), _array(4, dtype=I32), _array(4, 3, dtype=F32),
                        _array(2, 6), _array(2, 4), types.int64, _array(4, 3, dtype=F64)),
    "count_sides": (_array(4, 3, dtype=I8), _array(4, dtype=I32), _array(2, 7), _array(3, dtype=np.bool_),
                    _array(2, 4), _array(4, dtype=I8), _array(2), _array(2)),
    "scatter_sides": (_array(4, dtype=I32), _array(2, 7), _array(2, 4), _array(4, dtype=I8), _array(2), _array(2),
                      _array(4, dtype=I32)),
    "copy_shares": (_array(4, dtype=I32), _array(4, dtype=I32), _array(2, 4)),
}


def main() -> int:
    # a device function's compilation asks the current device for its capability: answer without a GPU
    def device():
        return pytypes.SimpleNamespace(compute_capability=CAPABILITY)
    numba.cuda.api.get_current_device = numba.cuda.dispatcher.get_current_device = device
    launched = {name for name, value in vars(kernels).items()
                if isinstance(value, numba.cuda.dispatcher.CUDADispatcher) and not value.targetoptions.get("device")}
    if launched != set(SIGNATURES):
        print(f"kernels of multigrove.kernels.cuda: {sorted(launched)}; signatures here: {sorted(SIGNATURES)}")
        return 1
    for name, signature in SIGNATURES.items():
        ptx, _ = cuda.compile_ptx(getattr(kernels, name).py_func, signature, cc=CAPABILITY)
        print(name, "compiled", len(ptx), "characters of PTX")
    return 0


if __name__ == "__main__":
    sys.exit(main())
