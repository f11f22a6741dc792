"""Numba kernels: pure functions over arrays.

Rules kept by every kernel here: the caller allocates every output (arguments marked OUT),
nothing is read from or written to global state, ``cache=True`` so compiled code is reused
across processes, and each kernel has a naive twin in ``tests/kernels`` that it must equal.

Every kernel is compiled with ``error_model="numpy"``: a float division by zero gives inf or NaN, as in
NumPy, where Numba's default raises ZeroDivisionError and so tests every divisor, a branch that keeps the
loop around it from vectorizing (a parallel loop is compiled without the test anyway; the serial twins
were the slower for it: sigmoid_round on 12,920 x 983 took 116-130 ms on one thread, 43-50 without).
"""
