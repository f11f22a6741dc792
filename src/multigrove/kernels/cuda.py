"""CUDA kernels of the GPU histogram builder (``boosting/cuda_builder.py``), in Numba's CUDA dialect.

Imported only when a model trains with ``device_type="cuda"``: importing it needs ``numba.cuda`` (the
``numba-cuda`` package, ``pip install multigrove[cuda]``) and initialises nothing until a kernel is launched.
CI runs these kernels in Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) against their CPU twins.

The store they read is a dense matrix of bins (n, F) uint8 on the device: feature j's bin b of row r is
histogram row ``dense_base[j] + b``, as in ``kernels/store.py``.  Every kernel works on several row
segments at once (the nodes of a request batch: a level of a depth-wise or symmetric tree is one launch
per step), a thread finding its segment by a binary search over the segments' offsets.  Histograms are
summed in float64 with atomic adds: the sums equal the CPU kernels' up to the order of the additions
(float64 rounding), not bit for bit.
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
def zero_histogram(out, n_rows):
    """OUT out[:n_rows] (of a (rows, C) float64 array) = 0."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    width = out.shape[1]
    while i < n_rows * width:
        out[i // width, i % width] = 0.0
        i += stride


@cuda.jit(device=True)
def _segment_of(segment_offset, i):
    """The segment s holding item i: segment_offset[s] <= i < segment_offset[s + 1] (binary search)."""
    lo, hi = 0, segment_offset.shape[0] - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if segment_offset[mid] <= i:
            lo = mid
        else:
            hi = mid - 1
    return lo


@cuda.jit
def histogram_rows(binned, dense_base, rows, segment_start, segment_offset, stats, out):
    """Histograms of several row segments in one launch: segment s is rows[segment_start[s]:segment_start[s] +
    n_s] (n_s = segment_offset[s + 1] - segment_offset[s]) and adds into out's rows s * total_bins ...
    (s + 1) * total_bins - 1; out[s * total_bins + dense_base[j] + binned[r, j], c] += stats[r, c] for every
    column j and statistic c.  One row per thread (grid-stride over all segments' rows), float64 atomic adds.

    IN binned (N, F) uint8; dense_base (F,) int64; rows (N,) int32; segment_start (S,), segment_offset
    (S + 1,) int64; stats (N, C) float32.  IN/OUT out (>= S * total_bins, C) float64 (zeroed by the caller)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n_columns = binned.shape[1]
    width = stats.shape[1]
    total_bins = out.shape[0] // (segment_offset.shape[0] - 1)
    n = segment_offset[segment_offset.shape[0] - 1]
    while i < n:
        s = _segment_of(segment_offset, i)
        r = rows[segment_start[s] + i - segment_offset[s]]
        base = s * total_bins
        for j in range(n_columns):
            b = base + dense_base[j] + binned[r, j]
            for c in range(width):
                cuda.atomic.add(out, (b, c), float64(stats[r, c]))
        i += stride


@cuda.jit
def mark_sides(binned, rows, segment_start, segment_offset, column, threshold_bin, missing_bin, default_left,
               category_offset, categories, goes_left, n_left):
    """For the rows of several segments (as histogram_rows), each under its own split: goes_left[i] = 1 when
    the i-th row goes left (kernels.partition's rule: split s's set of categories
    categories[category_offset[s]:category_offset[s + 1]] when it has entries, else bin <= threshold_bin[s],
    the missing bin by default_left[s]); n_left[s] += the rows of segment s going left.

    IN column, threshold_bin, missing_bin (S,) int64, default_left (S,) uint8, category_offset (S + 1,) int64,
    categories (>= 1,) bool.  OUT goes_left (>= total rows,) uint8.  IN/OUT n_left (S,) int64 (zeroed)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = segment_offset[segment_offset.shape[0] - 1]
    while i < n:
        s = _segment_of(segment_offset, i)
        b = binned[rows[segment_start[s] + i - segment_offset[s]], column[s]]
        if category_offset[s + 1] > category_offset[s]:
            left = categories[category_offset[s] + b]
        elif b == missing_bin[s]:
            left = default_left[s] != 0
        else:
            left = b <= threshold_bin[s]
        goes_left[i] = 1 if left else 0
        if left:
            cuda.atomic.add(n_left, s, 1)
        i += stride


@cuda.jit
def scatter_sides(rows, segment_start, segment_offset, goes_left, n_left, next_slot, out):
    """out[segment_offset[s]:...] = segment s's left rows, then its right ones (from n_left[s] on), in the
    order the threads claim slots (next_slot: (2 S,) int64 counters, zeroed by the caller)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = segment_offset[segment_offset.shape[0] - 1]
    while i < n:
        s = _segment_of(segment_offset, i)
        r = rows[segment_start[s] + i - segment_offset[s]]
        if goes_left[i]:
            out[segment_offset[s] + cuda.atomic.add(next_slot, 2 * s, 1)] = r
        else:
            out[segment_offset[s] + n_left[s] + cuda.atomic.add(next_slot, 2 * s + 1, 1)] = r
        i += stride


@cuda.jit
def copy_rows(source, out, segment_start, segment_offset):
    """Segment s of out (out[segment_start[s]:...]) = source[segment_offset[s]:segment_offset[s + 1]]."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = segment_offset[segment_offset.shape[0] - 1]
    while i < n:
        s = _segment_of(segment_offset, i)
        out[segment_start[s] + i - segment_offset[s]] = source[i]
        i += stride
