"""CUDA kernels of the GPU training shard (``boosting/cuda_shard.py``): everything a round does row by row
besides histograms and partitions (``kernels/cuda.py``), on arrays that stay on the GPU.

Gradients and Hessians of the built-in losses, the row weights and missing-label masks applied to them,
the global quantities of a sketch (column norms, Gram products) and the sketch itself, GOSS's row norms
and scaling, the statistic sums of each leaf and the score update.  Each has a CPU twin in
``kernels/objective.py``, ``kernels/sampling.py``, ``kernels/split.py``, ``kernels/partition.py`` or
``boosting/sketch.py``, which the tests compare it with under Numba's CUDA simulator.

Cell-wise kernels are grid-stride loops over rows (a thread a row: the rows' cells are contiguous).
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
def residual(raw, y, shift, scale, out_g):
    """OUT out_g (n, d) float32 = raw - (y - shift) / scale: the squared loss's gradient (shift 0 and scale 1
    without target scaling).  IN raw (n, d) float64; y (n, d) float64; shift, scale (d,) float64."""
    for i in range(cuda.grid(1), raw.shape[0], cuda.gridsize(1)):
        for j in range(raw.shape[1]):
            out_g[i, j] = raw[i, j] - (y[i, j] - shift[j]) / scale[j]


@cuda.jit(cache=True)
def softmax_grad_hess(raw, y, out_g, out_h):
    """OUT out_g (n, K) = softmax(raw) - onehot(y); OUT out_h (n, K) = p (1 - p).  IN raw (n, K) float64,
    y (n,) int64 class ids.  Each exponential is taken twice (for the sum, then for p): no row buffer."""
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
            out_h[i, j] = p * (1.0 - p)
            out_g[i, j] = p
        out_g[i, y[i]] -= 1.0


@cuda.jit(cache=True)
def sigmoid_grad_hess(raw, y, out_g, out_h):
    """OUT out_g (n, L) = sigmoid(raw) - y; OUT out_h = p (1 - p).  IN raw (n, L) float64, y (n, L) 0/1."""
    for i in range(cuda.grid(1), raw.shape[0], cuda.gridsize(1)):
        for j in range(raw.shape[1]):
            x = raw[i, j]
            e = math.exp(-abs(x))
            p = (1.0 if x >= 0 else e) / (1.0 + e)
            out_g[i, j] = p - y[i, j]
            out_h[i, j] = p * (1.0 - p)


@cuda.jit(cache=True)
def scale_rows_by(values, weights, n_cols):
    """OUT values (n, m) float32, in place: the first n_cols columns of row i times weights[i] (n,) float32."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        w = weights[i]
        for j in range(n_cols):
            values[i, j] *= w


@cuda.jit(cache=True)
def scale_rows(values, rows, n_cols, factor):
    """OUT values (n, m) float32, in place: the first n_cols columns of the rows ``rows`` (k,) int32 times
    ``factor`` (float32)."""
    for k in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        r = rows[k]
        for j in range(n_cols):
            values[r, j] *= factor


@cuda.jit(cache=True)
def mask_cells(values, mask):
    """OUT values (n, m) float32, in place: times mask (n, m) float32 (0 where a label is missing)."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        for j in range(values.shape[1]):
            values[i, j] *= mask[i, j]


@cuda.jit(cache=True)
def fill_cells(values, source):
    """OUT values (n, m) float32 = source, (n, m) or (n, 1) float32 (one value a row, as NumPy broadcasts it): a
    constant Hessian times the row's weight and label mask."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        for j in range(values.shape[1]):
            values[i, j] = source[i, j] if source.shape[1] == values.shape[1] else source[i, 0]


@cuda.jit(cache=True)
def zero_columns(values, columns):
    """OUT values (n, m) float32: the columns ``columns`` (c,) int64 set to 0 (outputs that stopped learning)."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        for c in range(columns.shape[0]):
            values[i, columns[c]] = 0.0


@cuda.jit(cache=True)
def row_sq_norms(values, out):
    """OUT out (n,) float32: the squared L2 norm of every row of values (n, k) float32, summed in float64
    in column order (kernels.sampling.row_sq_norms, bit for bit)."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        total = 0.0
        for j in range(values.shape[1]):
            total += float64(values[i, j]) * float64(values[i, j])
        out[i] = total


@cuda.jit(cache=True)
def gather_columns(G, H, columns, scale, out_g, out_h):
    """The sketches that keep columns: OUT out_g (n, c) = G[:, columns] * scale; OUT out_h (n, c or 0) =
    H[:, columns] when it has columns.  IN G, H (n, d) float32; columns (c,) int64; scale (c,) float32."""
    for i in range(cuda.grid(1), G.shape[0], cuda.gridsize(1)):
        for c in range(columns.shape[0]):
            out_g[i, c] = G[i, columns[c]] * scale[c]
        for c in range(out_h.shape[1]):
            out_h[i, c] = H[i, columns[c]]


@cuda.jit(cache=True)
def project_rows(G, P_T, H, out_g, out_h):
    """The sketches that mix outputs: OUT out_g (n, k) = G P, P_T (k, d) float32 being P transposed; OUT out_h
    (n, 1 or 0) = the row means of H (n, d) float32 when it has a column (kernels.objective.project_rows)."""
    d = G.shape[1]
    for i in range(cuda.grid(1), G.shape[0], cuda.gridsize(1)):
        for c in range(P_T.shape[0]):
            total = G[i, 0] * 0
            for j in range(d):
                total += G[i, j] * P_T[c, j]
            out_g[i, c] = total
        if out_h.shape[1] > 0:
            total_h = 0.0
            for j in range(d):
                total_h += float64(H[i, j])
            out_h[i, 0] = total_h / d


@cuda.jit(cache=True)
def times_matrix(G, V, out):
    """OUT out (n, l) float32 = G V.  IN G (n, d) float32, V (d, l) float32."""
    for i in range(cuda.grid(1), G.shape[0], cuda.gridsize(1)):
        for c in range(V.shape[1]):
            total = G[i, 0] * 0
            for j in range(G.shape[1]):
                total += G[i, j] * V[j, c]
            out[i, c] = total


@cuda.jit(cache=True)
def transposed_products(A, B, work, out):
    """IN/OUT out (d, l) float64 (zeroed by the caller) += A^T B over the rows of the work items' shares
    (work (W, 4) int64 from row_shares over one segment: positions work[w, 2] .. work[w, 3] - 1 are rows).
    IN A (n, d), B (n, l) float32.  Column norms are A = B = G, l = d, with only the diagonal asked
    (``diagonal`` kernels call transposed_diagonal)."""
    n_cells = A.shape[1] * B.shape[1]
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        for cell in range(cuda.threadIdx.x, n_cells, cuda.blockDim.x):
            j = cell // B.shape[1]
            c = cell % B.shape[1]
            total = 0.0
            for i in range(work[item, 2], work[item, 3]):
                total += float64(A[i, j]) * float64(B[i, c])
            cuda.atomic.add(out, (j, c), total)


@cuda.jit(cache=True)
def transposed_diagonal(G, work, out):
    """IN/OUT out (d,) float64 (zeroed by the caller) += the column sums of G * G (n, d) float32 over the
    rows of the work items' shares (as transposed_products)."""
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        for j in range(cuda.threadIdx.x, G.shape[1], cuda.blockDim.x):
            total = 0.0
            for i in range(work[item, 2], work[item, 3]):
                total += float64(G[i, j]) * float64(G[i, j])
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
