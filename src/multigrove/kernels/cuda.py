"""CUDA kernels of the GPU histogram builder (``boosting/cuda_builder.py``), in Numba's CUDA dialect.

Imported only when a model trains with ``device_type="cuda"``: importing it needs ``numba.cuda`` (the
``numba-cuda`` package, ``pip install multigrove[cuda]``) and initialises nothing until a kernel is launched.
CI runs these kernels in Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) against their CPU twins.

The store they read is a dense matrix of bins (n, F) uint8 on the device: feature j's bin b of row r is
histogram row ``dense_base[j] + b``, as in ``kernels/store.py``.  Every kernel works on several row
segments at once (the nodes of a request batch: a level of a depth-wise or symmetric tree is one launch
per step).  A launch's work is a list of shares of the segments' rows (``boosting/cuda_builder.row_shares``),
a block at a time, so that a block keeps its sums in shared memory and adds them to global memory once.
Histograms are summed in float64 with atomic adds: the sums equal the CPU kernels' up to the order of the
additions (float64 rounding), not bit for bit.

A step's small inputs travel in one int64 array, its *plan* (one upload a step: each upload is a driver call
and a wait): a row per segment first (a partition's rule, or a histogram's slot), then a row per work item
(segment, tile, first position, end position).
"""
from numba import cuda, float64, int64

#: threads per block of every kernel
THREADS_PER_BLOCK = 128
#: blocks at most per launch: the grid-stride loops cover the rest
MAX_BLOCKS = 1024
#: blocks at most per launch of the kernels over work items (a block an item; the grid-stride loop over
#: items covers the rest)
MAX_WORK_BLOCKS = 65535
#: float64 cells of a block's shared histogram tile (histogram_tiles): 48 KiB, the static shared-memory limit
TILE_CELLS = 6144
#: threads per block of histogram_tiles (four blocks of 48 KiB share an SM)
TILE_THREADS = 256
#: consecutive rows of a thread in each pass of scatter_sides (128 threads: a pass of 2,048 rows)
SCATTER_RUN = 16


def blocks_for(n_items: int) -> int:
    """Blocks of THREADS_PER_BLOCK threads for n_items grid-stride items."""
    return max(1, min(MAX_BLOCKS, (n_items + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK))


@cuda.jit(cache=True)
def zero_histogram(out, n_rows):
    """OUT out[:n_rows] (of a (rows, C) float64 array) = 0."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    width = out.shape[1]
    while i < n_rows * width:
        out[i // width, i % width] = 0.0
        i += stride


@cuda.jit(cache=True)
def zero_slots(arena, plan, n_segments, total_bins):
    """OUT the histogram rows of the slots plan[s, 0] (s < n_segments) of ``arena`` (rows, C) float64 = 0."""
    width = arena.shape[1]
    n_cells = n_segments * total_bins * width
    i = cuda.grid(1)
    while i < n_cells:
        row = i // width
        arena[plan[row // total_bins, 0] * total_bins + row % total_bins, i % width] = 0.0
        i += cuda.gridsize(1)


@cuda.jit(device=True, cache=True)
def _add_slot(binned, dense_base, rows, stats, tile_hist, slot, first_column, first_stat, n_stats, first_bin,
              begin, end, step):
    """tile_hist[cell of (column, bin, statistic)] += stats for the slot's (column, statistic) over
    rows[begin:end:step] (the row loop of histogram_tiles, free of divisions)."""
    j = first_column + slot // n_stats
    c = slot % n_stats
    offset = (dense_base[j] - first_bin) * n_stats + c
    for i in range(begin, end, step):
        r = rows[i]
        cuda.atomic.add(tile_hist, offset + binned[r, j] * n_stats, float64(stats[r, first_stat + c]))


@cuda.jit(cache=True)
def histogram_tiles(binned, dense_base, rows, stats, tiles, plan, n_segments, total_bins, out):
    """Histograms of several row segments in one launch, each block summing a share of one segment's rows
    into one tile of the histogram in shared memory, then adding the tile to ``out`` (one float64 atomic add
    a non-zero cell).  Tile t covers dense columns tiles[t, 0] .. tiles[t, 1] - 1 (histogram rows
    tiles[t, 4] .. tiles[t, 5] - 1) and statistics tiles[t, 2] .. tiles[t, 3] - 1; its cells,
    (rows of the tile) x (its statistics), fit TILE_CELLS.  The plan's rows after the n_segments first are the
    work items, a block at a time (grid-stride): item w, work = plan[n_segments:], is segment work[w, 0], tile
    work[w, 1], its share rows[work[w, 2]:work[w, 3]] of the segment's rows; segment s adds into the slot
    plan[s, 0] of out: rows plan[s, 0] * total_bins ... (plan[s, 0] + 1) * total_bins - 1.
    Each thread of a block keeps one (column, statistic) slot and adds it for a stride of the share's rows.

    IN binned (N, F) uint8; dense_base (F,) int64; rows (N,) int32; stats (N, C) float32; tiles (T, 6),
    plan (S + W, >= 4) int64.  IN/OUT out (slots * total_bins, C) float64 (its slots zeroed)."""
    tile_hist = cuda.shared.array(TILE_CELLS, float64)
    thread = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    work = plan[n_segments:]
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        segment = work[item, 0]
        tile = work[item, 1]
        first_column = tiles[tile, 0]
        first_stat = tiles[tile, 2]
        n_stats = tiles[tile, 3] - first_stat
        first_bin = tiles[tile, 4]
        n_cells = (tiles[tile, 5] - first_bin) * n_stats
        for k in range(thread, n_cells, n_threads):
            tile_hist[k] = 0.0
        cuda.syncthreads()
        slots = (tiles[tile, 1] - first_column) * n_stats
        begin = work[item, 2]
        end = work[item, 3]
        if slots <= n_threads:  # a thread keeps one (column, statistic) slot over every pass's rows
            rows_per_pass = n_threads // slots
            if thread < rows_per_pass * slots:
                _add_slot(binned, dense_base, rows, stats, tile_hist, thread % slots, first_column, first_stat,
                          n_stats, first_bin, begin + thread // slots, end, rows_per_pass)
        else:
            for slot in range(thread, slots, n_threads):
                _add_slot(binned, dense_base, rows, stats, tile_hist, slot, first_column, first_stat, n_stats,
                          first_bin, begin, end, 1)
        cuda.syncthreads()
        base = plan[segment, 0] * total_bins + first_bin
        for k in range(thread, n_cells, n_threads):
            value = tile_hist[k]
            if value != 0.0:
                cuda.atomic.add(out, (base + k // n_stats, first_stat + k % n_stats), value)
        cuda.syncthreads()


#: columns of a partition's rules (count_sides, scatter_sides): one row per segment of its plan; RULE_N_LEFT,
#: zero in the plan, receives the segment's count of left rows; RULE_EXPECTED_LEFT is the count the host took
#: for it without waiting for the partition (-1: none), which scatter_sides checks
(RULE_START, RULE_COLUMN, RULE_THRESHOLD, RULE_MISSING, RULE_DEFAULT_LEFT, RULE_SET_FIRST, RULE_SET_END,
 RULE_N_LEFT, RULE_EXPECTED_LEFT) = range(9)
RULE_WIDTH = 9


@cuda.jit(device=True, cache=True)
def _goes_left(b, rules, s, categories):
    """kernels.partition's rule for bin b under segment s's split: its set of categories
    categories[RULE_SET_FIRST:RULE_SET_END] when it has entries, else bin <= threshold, the missing bin by
    default_left."""
    if rules[s, RULE_SET_END] > rules[s, RULE_SET_FIRST]:
        return categories[rules[s, RULE_SET_FIRST] + b]
    if b == rules[s, RULE_MISSING]:
        return rules[s, RULE_DEFAULT_LEFT] != 0
    return b <= rules[s, RULE_THRESHOLD]


@cuda.jit(cache=True)
def count_sides(binned, rows, plan, n_segments, categories, goes_left, share_left):
    """The first step of a partition of several segments, each under its own split (a row of the rules,
    plan[:n_segments]): goes_left[i] = 1 when row rows[i] goes left, for the shares of the work items
    (plan[n_segments:], as histogram_tiles' with one tile: segment work[w, 0], positions work[w, 2] ..
    work[w, 3] - 1); share_left[w] = the share's left rows (each thread's count added once in shared memory);
    the segment's rule's RULE_N_LEFT += them, one global atomic a share.

    IN binned (N, F) uint8; rows (N,) int32; categories (>= 1,) bool.  IN/OUT plan (S + W, RULE_WIDTH) int64
    (RULE_* columns; RULE_N_LEFT zero on entry).  OUT goes_left (N,) uint8, share_left (W,) int64."""
    count = cuda.shared.array(1, int64)
    thread = cuda.threadIdx.x
    rules = plan[:n_segments]
    work = plan[n_segments:]
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        segment = work[item, 0]
        column = rules[segment, RULE_COLUMN]
        if thread == 0:
            count[0] = 0
        cuda.syncthreads()
        mine = 0
        for i in range(work[item, 2] + thread, work[item, 3], cuda.blockDim.x):
            left = _goes_left(binned[rows[i], column], rules, segment, categories)
            goes_left[i] = 1 if left else 0
            mine += 1 if left else 0
        cuda.atomic.add(count, 0, mine)
        cuda.syncthreads()
        if thread == 0:
            share_left[item] = count[0]
            cuda.atomic.add(rules, (segment, RULE_N_LEFT), count[0])
        cuda.syncthreads()


@cuda.jit(device=True, cache=True)
def _inclusive_scan(values, thread, n_threads):
    """values[:n_threads] (shared memory) = their inclusive prefix sums (Hillis-Steele, every thread of the
    block calling it)."""
    offset = 1
    while offset < n_threads:
        before = values[thread - offset] if thread >= offset else 0
        cuda.syncthreads()
        values[thread] += before
        cuda.syncthreads()
        offset *= 2


@cuda.jit(cache=True)
def scatter_sides(rows, plan, n_segments, goes_left, share_left, out, mismatch):
    """The second step, a stable partition: out[place] = rows[i], each segment's left rows first (in their
    order), then its right rows (in theirs), from rules[s, RULE_START] on.  A share's places follow those of
    the segment's earlier shares (work lists a segment's shares in order).  Within a share, each pass gives
    every thread a run of SCATTER_RUN consecutive rows, and a block-wide prefix sum over the runs' left
    counts gives each run its places: no atomic.  A segment whose count of left rows differs from the one
    the host took (RULE_EXPECTED_LEFT, where not -1) sets mismatch[0] to 1.

    IN rows (N,) int32; plan (S + W, RULE_WIDTH), share_left (W,) int64 (after count_sides); goes_left (N,)
    uint8.  OUT out (N,) int32 (the shares' positions).  IN/OUT mismatch (1,) int64, left as it is where the
    counts agree.  blockDim.x at most THREADS_PER_BLOCK."""
    base = cuda.shared.array(2, int64)
    lefts = cuda.shared.array(THREADS_PER_BLOCK, int64)
    thread = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    rules = plan[:n_segments]
    work = plan[n_segments:]
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        segment = work[item, 0]
        end = work[item, 3]
        if thread == 0:
            earlier_left = 0
            earlier_right = 0
            k = item - 1
            while k >= 0 and work[k, 0] == segment:
                earlier_left += share_left[k]
                earlier_right += work[k, 3] - work[k, 2] - share_left[k]
                k -= 1
            base[0] = rules[segment, RULE_START] + earlier_left
            base[1] = rules[segment, RULE_START] + rules[segment, RULE_N_LEFT] + earlier_right
            expected = rules[segment, RULE_EXPECTED_LEFT]
            if expected >= 0 and expected != rules[segment, RULE_N_LEFT]:
                mismatch[0] = 1
        cuda.syncthreads()
        for first in range(work[item, 2], end, n_threads * SCATTER_RUN):
            run_start = first + thread * SCATTER_RUN
            run_end = run_start + SCATTER_RUN
            if run_end > end:
                run_end = end
            run_left = 0
            for i in range(run_start, run_end):
                run_left += goes_left[i]
            lefts[thread] = run_left
            cuda.syncthreads()
            _inclusive_scan(lefts, thread, n_threads)
            left_place = base[0] + lefts[thread] - run_left
            right_place = base[1] + (run_start - first) - (lefts[thread] - run_left)
            for i in range(run_start, run_end):
                if goes_left[i]:
                    out[left_place] = rows[i]
                    left_place += 1
                else:
                    out[right_place] = rows[i]
                    right_place += 1
            cuda.syncthreads()
            if thread == 0:
                pass_rows = end - first
                if pass_rows > n_threads * SCATTER_RUN:
                    pass_rows = n_threads * SCATTER_RUN
                base[0] += lefts[n_threads - 1]
                base[1] += pass_rows - lefts[n_threads - 1]
            cuda.syncthreads()


@cuda.jit(cache=True)
def copy_shares(source, out, plan, n_segments):
    """out[i] = source[i] over the shares of the work items plan[n_segments:] (positions work[w, 2] ..
    work[w, 3] - 1)."""
    work = plan[n_segments:]
    for item in range(cuda.blockIdx.x, work.shape[0], cuda.gridDim.x):
        for i in range(work[item, 2] + cuda.threadIdx.x, work[item, 3], cuda.blockDim.x):
            out[i] = source[i]
