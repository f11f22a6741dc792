"""CUDA kernels of the GPU histogram builder (``boosting/cuda_builder.py``), in Numba's CUDA dialect.

Imported only when a model trains with ``device_type="cuda"``: importing it needs ``numba.cuda`` (the
``numba-cuda`` package, ``pip install multigrove[cuda]``) and initialises nothing until a kernel is launched.
CI runs these kernels in Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) against their CPU twins.

The store they read is a dense matrix of bins (n, F) uint8 on the device: feature j's bin b of row r is
histogram row ``dense_base[j] + b``, as in ``kernels/store.py``.  Histograms are summed in float64 with
atomic adds: the sums equal the CPU kernels' up to the order of the additions (float64 rounding), not bit
for bit.
"""
from numba import cuda, float64

#: threads per block of every kernel
THREADS_PER_BLOCK = 128
#: blocks at most per launch: the grid-stride loops cover the rest
MAX_BLOCKS = 1024


def blocks_for(n_items: int) -> int:
    """Blocks of THREADS_PER_BLOCK threads for n_items grid-stride items."""
    return max(1, min(MAX_BLOCKS, (n_items + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK))


@cuda.jit
def zero_histogram(out):
    """OUT out (total_bins, C) float64 = 0."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n_bins, width = out.shape
    while i < n_bins * width:
        out[i // width, i % width] = 0.0
        i += stride


@cuda.jit
def histogram_rows(binned, dense_base, rows, start, n, stats, out):
    """out[dense_base[j] + binned[r, j], c] += stats[r, c] for the rows r = rows[start:start + n], every
    column j and statistic c: one row per thread (grid-stride), float64 atomic adds.

    IN binned (N, F) uint8; dense_base (F,) int64; rows (N,) int32; stats (N, C) float32.
    IN/OUT out (total_bins, C) float64 (zeroed by the caller)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n_columns = binned.shape[1]
    width = stats.shape[1]
    while i < n:
        r = rows[start + i]
        for j in range(n_columns):
            b = dense_base[j] + binned[r, j]
            for c in range(width):
                cuda.atomic.add(out, (b, c), float64(stats[r, c]))
        i += stride


@cuda.jit
def mark_sides(binned, column, rows, start, n, threshold_bin, missing_bin, default_left, categories, goes_left,
               n_left):
    """goes_left[i] = 1 when row rows[start + i] goes left under the split (kernels.partition's rule: the
    set of ``categories`` when it has entries, else bin <= threshold_bin, the missing bin by
    default_left); n_left[0] += the rows going left.

    IN categories (bins,) bool, or (0,) for a numeric split.  OUT goes_left (>= n,) uint8.
    IN/OUT n_left (1,) int64 (zeroed by the caller)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        b = binned[rows[start + i], column]
        if categories.shape[0] > 0:
            left = categories[b]
        elif b == missing_bin:
            left = default_left
        else:
            left = b <= threshold_bin
        goes_left[i] = 1 if left else 0
        if left:
            cuda.atomic.add(n_left, 0, 1)
        i += stride


@cuda.jit
def scatter_sides(rows, start, n, goes_left, n_left, next_slot, out):
    """out[0:n_left] = the left rows of rows[start:start + n], out[n_left:n] the right ones, in the order
    the threads claim slots (next_slot: (2,) int64 counters, zeroed by the caller)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        r = rows[start + i]
        if goes_left[i]:
            out[cuda.atomic.add(next_slot, 0, 1)] = r
        else:
            out[n_left + cuda.atomic.add(next_slot, 1, 1)] = r
        i += stride


@cuda.jit
def copy_rows(source, out, start, n):
    """out[start:start + n] = source[0:n]."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        out[start + i] = source[i]
        i += stride
