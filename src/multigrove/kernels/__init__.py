"""Numba kernels: pure functions over arrays.

Rules kept by every kernel here: the caller allocates every output (arguments marked OUT),
nothing is read from or written to global state, ``cache=True`` so compiled code is reused
across processes, and each kernel has a naive twin in ``tests/kernels`` that it must equal.
"""
