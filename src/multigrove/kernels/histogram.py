"""Gradient histograms over any number of statistic columns.

A histogram is one flat float64 array ``(total_bins, C)``: feature f owns the rows
``offsets[f]:offsets[f+1]`` (its value bins, then its missing bin).  The C columns are the
per-row statistics the caller packed (gradients of k outputs or of a k-column sketch, their
Hessians unless constant, and a count column), so the same kernels serve single-output,
multi-output and sketched trees.

Two parallel schedules, both reading each row's bins and statistics once:
* ``build_histogram_rows``: rows split in chunks, one private histogram per chunk, then
  summed.  Fastest when C is small (one output: C = 2 or 3), where the private copies are
  cheap; the statistic columns are unrolled for C = 2 and 3.
* ``build_histogram_blocks``: features split in blocks, each task writes its own slice of
  the output.  No private copies: the choice for wide C (many outputs).
"""
from numba import njit, prange


@njit(cache=True)
def accumulate_rows(binned, rows, r0, r1, stats, offsets, h):
    """OUT h (total_bins, C) float64: adds the statistics of rows[r0:r1] to h (no zeroing)."""
    n_features = binned.shape[1]
    n_cols = h.shape[1]
    if n_cols == 2:
        for i in range(r0, r1):
            r = rows[i]
            s0 = stats[r, 0]
            s1 = stats[r, 1]
            for f in range(n_features):
                b = offsets[f] + binned[r, f]
                h[b, 0] += s0
                h[b, 1] += s1
    elif n_cols == 3:
        for i in range(r0, r1):
            r = rows[i]
            s0 = stats[r, 0]
            s1 = stats[r, 1]
            s2 = stats[r, 2]
            for f in range(n_features):
                b = offsets[f] + binned[r, f]
                h[b, 0] += s0
                h[b, 1] += s1
                h[b, 2] += s2
    else:
        for i in range(r0, r1):
            r = rows[i]
            for f in range(n_features):
                b = offsets[f] + binned[r, f]
                for k in range(n_cols):
                    h[b, k] += stats[r, k]


@njit(cache=True)
def build_histogram_serial(binned, rows, stats, offsets, out):
    """One thread (small nodes, where starting a parallel region costs more than the work).
    IN as build_histogram_rows.  OUT out (total_bins, C) float64, overwritten."""
    out[:, :] = 0.0
    accumulate_rows(binned, rows, 0, rows.shape[0], stats, offsets, out)


@njit(parallel=True, cache=True)
def build_histogram_rows(binned, rows, stats, offsets, scratch, out):
    """IN binned (n, F) uint8; rows (m,) int32; stats (n, C) float32; offsets (F+1,) int64.
    OUT scratch (n_chunks, total_bins, C) float64 private histograms (any content on entry).
    OUT out (total_bins, C) float64, overwritten."""
    n_rows = rows.shape[0]
    n_chunks = scratch.shape[0]
    n_bins, n_cols = out.shape
    for c in prange(n_chunks):
        h = scratch[c]
        h[:, :] = 0.0
        accumulate_rows(binned, rows, c * n_rows // n_chunks, (c + 1) * n_rows // n_chunks, stats, offsets, h)
    for b in prange(n_bins):
        for k in range(n_cols):
            s = 0.0
            for c in range(n_chunks):
                s += scratch[c, b, k]
            out[b, k] = s


@njit(parallel=True, cache=True)
def build_histogram_blocks(binned, rows, stats, offsets, n_blocks, out):
    """IN as build_histogram_rows; features are split in n_blocks contiguous blocks, one task each.
    OUT out (total_bins, C) float64, overwritten."""
    n_features = binned.shape[1]
    n_cols = stats.shape[1]
    n_rows = rows.shape[0]
    for blk in prange(n_blocks):
        f0 = blk * n_features // n_blocks
        f1 = (blk + 1) * n_features // n_blocks
        for b in range(offsets[f0], offsets[f1]):
            for c in range(n_cols):
                out[b, c] = 0.0
        for i in range(n_rows):
            r = rows[i]
            for f in range(f0, f1):
                b = offsets[f] + binned[r, f]
                for c in range(n_cols):
                    out[b, c] += stats[r, c]


@njit(parallel=True, cache=True)
def subtract_histogram(parent, child, out):
    """OUT out = parent - child (out may be parent itself: the sibling's histogram in place)."""
    n_bins, n_cols = parent.shape
    for b in prange(n_bins):
        for c in range(n_cols):
            out[b, c] = parent[b, c] - child[b, c]
