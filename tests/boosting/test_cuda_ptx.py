"""The CUDA kernels compile for a real GPU: the simulator of ``test_cuda_builder.py`` runs them as Python and
never calls the CUDA compiler.  ``ptx_compile.py`` compiles each to PTX in a process of its own, with the
NVVM library of the ``nvidia-cuda-nvcc-cu12`` wheel (a test dependency on Linux x86-64); no GPU is needed."""
import importlib.util
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not (sys.platform == "linux" and platform.machine() == "x86_64"),
                                reason="the nvidia-cuda-nvcc-cu12 wheel (libnvvm) is a test dependency on Linux x86-64")


def test_every_cuda_kernel_compiles_to_ptx():
    spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    assert spec is not None and spec.submodule_search_locations, "pip install nvidia-cuda-nvcc-cu12 (the test extra)"
    nvcc = Path(list(spec.submodule_search_locations)[0])
    assert (nvcc / "nvvm" / "lib64" / "libnvvm.so").exists()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["CUDA_HOME"] = str(nvcc)
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("ptx_compile.py"))], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.count("compiled") == 30, done.stdout
