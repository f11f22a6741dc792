"""The binned feature store: the arrays every row-side kernel reads, as one NamedTuple.

Feature f owns the histogram rows ``offsets[f]:offsets[f+1]``: its value bins, then its missing
bin (``missing_bin[f]`` = the number of value bins).  Each feature lives in one of three stores:

* ``dense`` (kind 0): a uint8 column of bins, one byte per row.  Global histogram index of
  row r: ``dense_base[slot] + dense[r, slot]``.
* ``bundle`` (kind 1, exclusive feature bundling): several features that are rarely non-default
  in the same row share one uint8 column of codes; ``code_map[code_offset[slot] + code]`` is the
  global histogram index of a code.  Code 0 means "every member at its default bin".
* ``sparse`` (kind 2): a CSR matrix whose row r lists the global histogram indices of the
  row's non-default bins, ascending; the same entries by feature (``csc_*``: each feature's rows,
  ascending, and local bins) serve the partition, which reads one feature of a node's rows.

For features of kinds 1 and 2 the default bin (the most frequent one, the zero bin of a sparse
column) is never visited row by row: its sums are the node totals minus the feature's other
bins (``derived`` lists these features).  Both uint8 stores are kept twice: row-major (the
histogram of a node reads whole rows) and column-major (the root histogram and the partition read
one feature of many rows: with row-major bundles only, a one-hot set's partitions and root
histograms took 2.5 times as long).

A sparse or bundled feature with at least ROW_INDEX_MIN_ENTRIES_PER_WORD CSC entries per 64 rows also has a
row index (``csc_index[f]``, its row of ``csc_words`` and ``csc_word_rank``): bit ``r % 64`` of word ``r // 64`` is set
where row r has an entry, and the word's rank counts the feature's entries in the rows before it, so
that row r's entry is ``csc_indptr[f] + rank + popcount(the word's bits below r)``.  The partition reads
a row's bin of such a feature in constant time, where it would merge the node's rows with the feature's
entries.
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from ._llvm import popcount

FEATURE_DENSE = 0
FEATURE_BUNDLED = 1
FEATURE_SPARSE = 2

#: the stores a kernel's code is compiled for: any, or dense columns only (every feature of FEATURE_DENSE).  A
#: kernel module's ``STORE_KIND`` global is STORE_ANY; its variants for dense stores (kernels._variants) set it to
#: STORE_DENSE, and Numba drops the bundled and sparse features' branches without compiling them: a fit on a
#: dense matrix runs only those variants where it matters for its first fit's compilation (CHANGELOG.md, stop 54)
STORE_ANY = 0
STORE_DENSE = 1

#: a sparse or bundled feature gets a row index (csc_index) from this many CSC entries per 64-row word on
#: average (a density of 1/16): the index, a word and a rank per 64 rows, then takes at most 3 bytes an entry,
#: a third of what the entry itself takes in the CSR rows and the CSC column (9 bytes).  Otto's store indexes
#: 81 of its 89 sparse features (98 % of their entries); the counts set of benchmarks/sparse_inputs.py (density
#: 0.1) all 100, its Dataset 49.3 -> 58.7 MB.  A sparser feature's rows are merged with its few entries
ROW_INDEX_MIN_ENTRIES_PER_WORD = 4.0


def dense_only(store) -> bool:
    """Whether every feature of the store is a dense column (its kernels' STORE_DENSE variants apply)."""
    return bool(np.all(store.feature_kind == FEATURE_DENSE))


class BinnedStore(NamedTuple):
    dense: np.ndarray          # (n, n_dense) uint8, C order
    dense_cols: np.ndarray     # (n_dense, n) uint8, C order: the transpose, each column's codes contiguous
    dense_base: np.ndarray     # (n_dense,) int64: histogram offset of each dense column's feature
    bundle: np.ndarray         # (n, n_bundles) uint8, C order
    bundle_cols: np.ndarray    # (n_bundles, n) uint8, C order: the transpose (see dense_cols)
    code_map: np.ndarray       # (n_codes,) int64: global histogram index of each bundle code
    code_offset: np.ndarray    # (n_bundles + 1,) int64
    sparse_indptr: np.ndarray  # (n + 1,) int64, or (0,) when the sparse store is empty
    sparse_bins: np.ndarray    # (nnz,) int32: global histogram indices, ascending within a row
    csc_indptr: np.ndarray     # (F + 1,) int64: the same entries by feature ...
    csc_rows: np.ndarray       # (nnz,) int32: ... their rows, ascending within a feature ...
    csc_bins: np.ndarray       # (nnz,) uint8: ... and their local bins
    feature_kind: np.ndarray   # (F,) int8: FEATURE_DENSE, FEATURE_BUNDLED or FEATURE_SPARSE
    feature_slot: np.ndarray   # (F,) int32: column in dense or bundle, -1 for sparse
    default_bin: np.ndarray    # (F,) int32: the most frequent bin (kinds 1 and 2 never store it)
    offsets: np.ndarray        # (F + 1,) int64
    missing_bin: np.ndarray    # (F,) int32
    derived: np.ndarray        # (n_derived,) int32: features whose default-bin sums are derived
    csc_index: np.ndarray      # (F,) int32: the feature's row of csc_words and csc_word_rank, or -1 (none)
    csc_words: np.ndarray      # (n_indexed, ceil(n / 64)) uint64: the rows with an entry, a bit each ...
    csc_word_rank: np.ndarray  # (n_indexed, ceil(n / 64)) int32: ... and the entries before each word

    @property
    def n_rows(self) -> int:
        return int(self.dense.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.feature_kind.shape[0])

    @property
    def total_bins(self) -> int:
        return int(self.offsets[-1])


@njit(cache=True, nogil=True, error_model="numpy")
def fill_row_index(csc_indptr, csc_rows, csc_index, words, ranks):
    """The row index of every feature with ``csc_index[f] >= 0`` (see the module docstring).

    IN  csc_indptr (F + 1,) int64, csc_rows (nnz,) int32: each feature's rows with an entry, ascending;
        csc_index (F,) int32: the feature's row of words and ranks, or -1.
    OUT words (n_indexed, n_words) uint64: bit r % 64 of word r // 64 set where row r has an entry;
        ranks (n_indexed, n_words) int32: the feature's entries in the rows before each word."""
    for f in range(csc_index.shape[0]):
        slot = csc_index[f]
        if slot < 0:
            continue
        for w in range(words.shape[1]):
            words[slot, w] = 0
        for p in range(csc_indptr[f], csc_indptr[f + 1]):
            r = np.uint64(csc_rows[p])
            words[slot, r >> np.uint64(6)] |= np.uint64(1) << (r & np.uint64(63))
        count = 0
        for w in range(words.shape[1]):
            ranks[slot, w] = count
            count += np.int64(popcount(words[slot, w]))
