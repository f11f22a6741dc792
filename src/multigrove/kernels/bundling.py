"""Exclusive feature bundling (LightGBM, Ke et al. 2017, Alg. 3): greedy assignment of features to
bundles whose members are rarely non-default in the same row."""
import numpy as np
from numba import njit


@njit(cache=True, inline="always", error_model="numpy")
def _count_hits(bits, slot, rows, r0, r1, limit):
    """The rows[r0:r1] marked in bundle slot's bitset, counted until the count passes limit (then the
    feature does not fit: counting on would not change that)."""
    c = 0
    for p in range(r0, r1):
        r = rows[p]
        c += (bits[slot, r >> 6] >> np.uint64(r & 63)) & np.uint64(1)
        if c > limit:
            break
    return c


@njit(cache=True, inline="always", error_model="numpy")
def _mark(bits, slot, rows, r0, r1):
    for p in range(r0, r1):
        r = rows[p]
        bits[slot, r >> 6] |= np.uint64(1) << np.uint64(r & 63)


@njit(cache=True, nogil=True, error_model="numpy")
def greedy_bundles(order, rows_indptr, rows, n_codes, max_conflicts, max_codes, bits, out_bundle):
    """Each feature, in ``order``, joins the most recent open bundle where it fits, else opens one.

    A feature fits a bundle when its non-default sample rows add at most ``max_conflicts``
    conflicts (rows where it and a member are both non-default) to the bundle's total, and its
    codes fit within ``max_codes``.  Only the ``bits.shape[0]`` most recent bundles are open (their
    row sets live in a ring buffer of bitsets), which bounds memory and time for many features.

    IN  order (m,) feature ids; rows_indptr (F + 1,), rows: the non-default sample rows of each feature.
    IN  n_codes (F,) the codes a feature needs; max_conflicts, max_codes: the budgets.
    OUT bits (window, n_words) uint64 scratch (n_words * 64 >= the sample size).
    OUT out_bundle (F,) int32: the bundle of each feature in ``order`` (others untouched).
    Returns the number of bundles.
    """
    window = bits.shape[0]
    conflicts = np.zeros(window, np.int64)
    codes = np.zeros(window, np.int64)
    slot_bundle = np.full(window, -1, np.int64)
    n_bundles = 0
    for f in order:
        r0, r1 = rows_indptr[f], rows_indptr[f + 1]
        placed = False
        for k in range(min(n_bundles, window)):
            slot = (n_bundles - 1 - k) % window  # most recent first
            if codes[slot] + n_codes[f] > max_codes:
                continue
            c = _count_hits(bits, slot, rows, r0, r1, max_conflicts - conflicts[slot])
            if conflicts[slot] + c <= max_conflicts:
                _mark(bits, slot, rows, r0, r1)
                conflicts[slot] += c
                codes[slot] += n_codes[f]
                out_bundle[f] = slot_bundle[slot]
                placed = True
                break
        if not placed:
            slot = n_bundles % window
            bits[slot, :] = 0
            _mark(bits, slot, rows, r0, r1)
            conflicts[slot] = 0
            codes[slot] = n_codes[f]
            slot_bundle[slot] = n_bundles
            out_bundle[f] = n_bundles
            n_bundles += 1
    return n_bundles


@njit(cache=True, nogil=True, error_model="numpy")
def fill_bundle_column(rows, codes, column, fits):
    """Write a bundle's codes into its column, the first entry of a row winning.

    IN  rows (m,) int64, codes (m,) int64: the bundle members' non-default entries, member by member
        in code order (-1 or 0: a bin without a code).
    OUT column (n,) uint8, zero on entry: the code of each row's first coded entry.
    OUT fits (m,) bool: whether the entry went into the column (the others, conflicts and uncoded
        bins, go to the CSR store).  In order, one entry after the other: which member gets a row
    depends on the members before it."""
    for i in range(rows.shape[0]):
        r = rows[i]
        fits[i] = codes[i] > 0 and column[r] == 0
        if fits[i]:
            column[r] = codes[i]
