"""CUDA kernels of the GPU training shard (``boosting/cuda_shard.py``): everything a round does row by row
besides histograms and partitions (``kernels/cuda.py``), on arrays that stay on the GPU.

Gradients and Hessians of the built-in losses, the row weights and missing-label masks applied to them,
the global quantities of a sketch (column norms, Gram products) and the sketch itself, GOSS's row norms
and scaling, the statistic sums of each leaf and the score update.  Each has a CPU twin in
``kernels/objective.py``, ``kernels/sampling.py``, ``kernels/split.py``, ``kernels/partition.py`` or
``boosting/sketch.py``, which the tests compare it with under Numba's CUDA simulator.

Cell-wise kernels are grid-stride loops over rows (a thread a row: the rows' cells are contiguous).  They take
the whole statistics matrix and the first column of a block (gradients from column 0, Hessians from ``h_col``),
never a strided view of it: numba-cuda 0.30.4 walks every row of a strided device view in Python the first
time it is passed to a kernel (0.9 s for a view of 1,000,000 rows, measured on an H100).
Kernels that sum over rows take the work items of ``boosting/cuda_builder.row_shares`` (a block a share
of a segment's rows) and add each thread's float64 sum to the output with one atomic add, so their sums
equal the CPU's up to the order of the additions.  Probabilities use CUDA's ``exp`` in float64 (the CPU
kernels use a polynomial of the same accuracy, 1 ulp): the float32 statistics agree to their rounding.
Imported only when a model trains with ``device_type="cuda"``.
"""
import math

from numba import cuda, float64

#: threads per block of every kernel here
ROW_THREADS = 128


@cuda.jit(cache=True)
def residual(raw, y, shift, scale, stats):
    """OUT stats[:, :d] (of (n, C) float32) = raw - (y - shift) / scale: the squared loss's gradient (shift 0 and
    scale 1 without target scaling).  IN raw (n, d) float64; y (n, d) float64; shift, scale (d,) float64."""
    for i in range(cuda.grid(1), raw.shape[0], cuda.gridsize(1)):
        for j in range(raw.shape[1]):
            stats[i, j] = raw[i, j] - (y[i, j] - shift[j]) / scale[j]


@cuda.jit(cache=True)
def softmax_grad_hess(raw, y, stats, h_col):
    """OUT stats[:, :K] = softmax(raw) - onehot(y); OUT stats[:, h_col:h_col + K] = p (1 - p).  IN raw (n, K)
    float64, y (n,) int64 class ids.  Each exponential is taken twice (for the sum, then for p): no row buffer."""
    n_classes = raw.shape[1]
    for i in range(cuda.grid(1), raw.shape[0], cuda.gridsize(1)):
        top = raw[i, 0]
        for j in range(1, n_classes):
            if raw[i, j] > top:
                top = raw[i, j]
        total = 0.0
        for j in range(n_classes):
            total += math.exp(raw[i, j] - top)
        inverse = 1.0 / total
        for j in range(n_classes):
            p = math.exp(raw[i, j] - top) * inverse
            stats[i, h_col + j] = p * (1.0 - p)
            stats[i, j] = p
        stats[i, y[i]] -= 1.0


@cuda.jit(cache=True)
def sigmoid_grad_hess(raw, y, stats, h_col):
    """OUT stats[:, :L] = sigmoid(raw) - y; OUT stats[:, h_col:h_col + L] = p (1 - p).  IN raw (n, L) float64,
    y (n, L) 0/1."""
    for i in range(cuda.grid(1), raw.shape[0], cuda.gridsize(1)):
        for j in range(raw.shape[1]):
            x = raw[i, j]
            e = math.exp(-abs(x))
            p = (1.0 if x >= 0 else e) / (1.0 + e)
            stats[i, j] = p - y[i, j]
            stats[i, h_col + j] = p * (1.0 - p)


@cuda.jit(cache=True)
def scale_rows_by(stats, weights, first, end):
    """OUT stats (n, C) float32, in place: columns first .. end - 1 of row i times weights[i] (n,) float32."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        w = weights[i]
        for j in range(first, end):
            stats[i, j] *= w


@cuda.jit(cache=True)
def scale_rows(stats, rows, n_cols, factor):
    """OUT stats (n, C) float32, in place: the first n_cols columns of the rows ``rows`` (k,) int32 times
    ``factor`` (float32)."""
    for k in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        r = rows[k]
        for j in range(n_cols):
            stats[r, j] *= factor


@cuda.jit(cache=True)
def mask_cells(stats, first, mask):
    """OUT stats (n, C) float32, in place: columns first .. first + m - 1 times mask (n, m) float32 (0 where a
    label is missing)."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        for j in range(mask.shape[1]):
            stats[i, first + j] *= mask[i, j]


@cuda.jit(cache=True)
def fill_cells(stats, first, end, source):
    """OUT stats[:, first:end] (of (n, C) float32) = source, (n, end - first) or (n, 1) float32 (one value a row,
    as NumPy broadcasts it): a constant Hessian times the row's weight and label mask."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        for j in range(end - first):
            stats[i, first + j] = source[i, j] if source.shape[1] == end - first else source[i, 0]


@cuda.jit(cache=True)
def zero_columns(stats, columns):
    """OUT stats (n, C) float32: the columns ``columns`` (c,) int64 set to 0 (outputs that stopped learning)."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        for c in range(columns.shape[0]):
            stats[i, columns[c]] = 0.0


@cuda.jit(cache=True)
def row_sq_norms(stats, k, out):
    """OUT out (n,) float32: the squared L2 norm of the first k columns of every row of stats (n, C) float32,
    summed in float64 in column order (kernels.sampling.row_sq_norms, bit for bit)."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        total = 0.0
        for j in range(k):
            total += float64(stats[i, j]) * float64(stats[i, j])
        out[i] = total


@cuda.jit(cache=True)
def gather_columns(stats, h_col, columns, scale, out, out_h_col):
    """The sketches that keep columns: OUT out[:, :c] = G[:, columns] * scale, G = stats[:, :d]; and when
    out_h_col >= 0, OUT out[:, out_h_col:out_h_col + c] = H[:, columns], H = stats[:, h_col:h_col + d].
    IN stats (n, C) float32; columns (c,) int64; scale (c,) float32.  OUT out (n, C') float32."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        for c in range(columns.shape[0]):
            out[i, c] = stats[i, columns[c]] * scale[c]
            if out_h_col >= 0:
                out[i, out_h_col + c] = stats[i, h_col + columns[c]]


@cuda.jit(cache=True)
def project_rows(stats, h_col, P_T, out, out_h_col):
    """The sketches that mix outputs: OUT out[:, :k] = G P, G = stats[:, :d], P_T (k, d) float32 being P
    transposed; and when out_h_col >= 0, OUT out[:, out_h_col] = the row means of H = stats[:, h_col:h_col + d]
    (kernels.objective.project_rows)."""
    d = P_T.shape[1]
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        for c in range(P_T.shape[0]):
            total = 0.0
            for j in range(d):
                total += float64(stats[i, j]) * float64(P_T[c, j])
            out[i, c] = total
        if out_h_col >= 0:
            total_h = 0.0
            for j in range(d):
                total_h += float64(stats[i, h_col + j])
            out[i, out_h_col] = total_h / d


@cuda.jit(cache=True)
def times_matrix(stats, V, out):
    """OUT out (n, l) float32 = G V, G = stats[:, :d].  IN stats (n, C) float32, V (d, l) float32."""
    for i in range(cuda.grid(1), stats.shape[0], cuda.gridsize(1)):
        for c in range(V.shape[1]):
            total = 0.0
            for j in range(V.shape[0]):
                total += float64(stats[i, j]) * float64(V[j, c])
            out[i, c] = total


@cuda.jit(cache=True)
def transposed_products(stats, B, work, out):
    """IN/OUT out (d, l) float64 (zeroed by the caller) += G^T B, G = stats[:, :d], over the rows of the work
    items' shares (work (W, 4) int64 from row_shares over one segment: positions work[w, 2] .. work[w, 3] - 1
    are rows).  IN stats (n, C), B (n, l) float32."""
    n_cells = out.shape[0] * out.shape[1]
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        for cell in range(cuda.threadIdx.x, n_cells, cuda.blockDim.x):
            j = cell // out.shape[1]
            c = cell % out.shape[1]
            total = 0.0
            for i in range(work[item, 2], work[item, 3]):
                total += float64(stats[i, j]) * float64(B[i, c])
            cuda.atomic.add(out, (j, c), total)


@cuda.jit(cache=True)
def transposed_diagonal(stats, work, out):
    """IN/OUT out (d,) float64 (zeroed by the caller) += the column sums of G * G, G = stats[:, :d] (n, C)
    float32, over the rows of the work items' shares (as transposed_products)."""
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        for j in range(cuda.threadIdx.x, out.shape[0], cuda.blockDim.x):
            total = 0.0
            for i in range(work[item, 2], work[item, 3]):
                total += float64(stats[i, j]) * float64(stats[i, j])
            cuda.atomic.add(out, j, total)


@cuda.jit(cache=True)
def segment_sums(rows, stats, work, out):
    """IN/OUT out (S, C) float64 (zeroed by the caller) += the sums of stats (n, C) float32 over rows
    rows[p] (int32) of each work item's share (segment work[w, 0], positions work[w, 2] .. work[w, 3] - 1).
    Thread t of a block keeps column t % C over every (blockDim // C)-th row of the share (one column a
    thread at a time when C exceeds the block)."""
    n_cols = stats.shape[1]
    thread = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    lanes = n_threads // n_cols if n_cols <= n_threads else 1
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        segment = work[item, 0]
        for slot in range(thread, lanes * n_cols, n_threads):
            column = slot % n_cols
            total = 0.0
            for p in range(work[item, 2] + slot // n_cols, work[item, 3], lanes):
                total += float64(stats[rows[p], column])
            cuda.atomic.add(out, (segment, column), total)


@cuda.jit(cache=True)
def add_leaf_values(rows, work, leaf_value, first_col, columns, scores):
    """OUT scores (n, d) float64: leaf work[w, 0]'s values added to the rows rows[work[w, 2]:work[w, 3]]
    (each row in one leaf's share: no two threads add to one cell).  IN leaf_value (n_leaves, width)
    float64; they go to columns first_col .. first_col + width - 1 when first_col >= 0, else to
    columns[leaf] (n_leaves, width) int32 (k-sparse leaves; kernels.partition.add_leaf_values)."""
    width = leaf_value.shape[1]
    thread = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    lanes = n_threads // width if width <= n_threads else 1
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        leaf = work[item, 0]
        for slot in range(thread, lanes * width, n_threads):
            k = slot % width
            column = first_col + k if first_col >= 0 else columns[leaf, k]
            value = leaf_value[leaf, k]
            for p in range(work[item, 2] + slot // width, work[item, 3], lanes):
                scores[rows[p], column] += value
