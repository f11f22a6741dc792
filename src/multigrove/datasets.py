"""Loaders for the benchmark data sets and synthetic generators for demos and benchmarks.

Real data is read where it lies (``MULTIGROVE_DATA``, or ``../shared/data`` next to the
working directory or the source checkout); it is never copied into the project.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ._validation import check_int
from .xmc.io import read_arff

#: Mulan multi-target regression sets: number of targets (the last attributes)
MULTI_TARGET = {"andro": 6, "atp1d": 6, "atp7d": 6, "edm": 2, "enb": 2, "jura": 3, "oes10": 16,
                "oes97": 16, "osales": 12, "rf1": 8, "scm20d": 16, "scpf": 3, "sf1": 3, "sf2": 3, "slump": 3}
#: Mulan multi-label sets: (file stem, number of labels)
MULTI_LABEL = {"yeast": ("yeast", 14), "emotions": ("emotions", 6), "scene": ("scene", 6),
               "enron": ("enron", 53), "bibtex": ("bibtex", 159), "delicious": ("delicious", 983),
               "corel5k": ("Corel5k", 374)}


def data_dir() -> Path | None:
    """The shared data folder, or None when it is not present."""
    cands = []
    if os.environ.get("MULTIGROVE_DATA"):
        cands.append(Path(os.environ["MULTIGROVE_DATA"]))
    here = Path(__file__).resolve()
    cands += [Path.cwd().parent / "shared" / "data", Path.cwd() / "shared" / "data",
              here.parents[3] / "shared" / "data" if len(here.parents) > 3 else Path("/nonexistent")]
    for c in cands:
        if c.is_dir() and (c / "README.md").exists():
            return c
    return None


def _folder(name: str, root: str | os.PathLike | None) -> Path:
    base = Path(root) if root is not None else data_dir()
    if base is None or not (base / name).is_dir():
        raise FileNotFoundError(f"data set {name!r} not found (looked in {base}); set MULTIGROVE_DATA to the "
                                "shared data folder")
    return base / name


def load_multi_target(name: str, root=None) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) of a Mulan multi-target regression set; missing feature values are NaN.

    Parameters
    ----------
    name : str
        The set (``"rf1"``, ``"scm20d"``, ``"atp1d"``, ...; see ``MULTI_TARGET``).
    root : str or PathLike, optional
        The data folder (default: ``$MULTIGROVE_DATA``, else ``../shared/data``); FileNotFoundError when absent.

    Returns
    -------
    X : ndarray (n, n_features)
    Y : ndarray (n, n_targets)
    """
    if name not in MULTI_TARGET:
        raise ValueError(f"unknown multi-target data set {name!r}; known: {sorted(MULTI_TARGET)}")
    arff = read_arff(_folder(name, root) / f"{name}.arff.gz", sparse=False)
    k = MULTI_TARGET[name]
    X, Y = arff.X[:, :-k], arff.X[:, -k:]
    keep = ~np.isnan(Y).any(axis=1)  # rows whose targets are missing cannot be scored
    return np.ascontiguousarray(X[keep]), np.ascontiguousarray(Y[keep])


def load_multi_label(name: str, root=None, sparse: bool = False):
    """(X_train, Y_train, X_test, Y_test) of a Mulan multi-label set with its shipped split.

    Parameters
    ----------
    name : str
        The set (``"emotions"``, ``"scene"``, ``"yeast"``, ``"delicious"``, ...; see ``MULTI_LABEL``).
    root : str or PathLike, optional
        The data folder (default: ``$MULTIGROVE_DATA``, else ``../shared/data``); FileNotFoundError when absent.
    sparse : bool, default False
        Return CSR matrices instead of dense arrays.

    Returns
    -------
    X_train, Y_train, X_test, Y_test : ndarray or scipy.sparse.csr_matrix
    """
    if name not in MULTI_LABEL:
        raise ValueError(f"unknown multi-label data set {name!r}; known: {sorted(MULTI_LABEL)}")
    stem, k = MULTI_LABEL[name]
    folder = _folder(name, root)
    out = []
    for split in ("train", "test"):
        cands = [folder / f"{stem}-{split}.arff.gz", folder / f"{stem}-{split}-sparse.arff.gz"]
        path = next((c for c in cands if c.exists()), cands[0])
        X = read_arff(path, sparse=sparse).X
        Xf, Y = X[:, :-k], X[:, -k:]
        if sparse:
            out += [Xf.tocsr(), Y.tocsr()]
        else:
            out += [np.ascontiguousarray(Xf), np.ascontiguousarray(Y)]
    return tuple(out)


def load_otto(root=None) -> tuple[np.ndarray, np.ndarray]:
    """(X, y): the 61,878 labelled Otto rows, 93 count features, classes 0..8.

    Parameters
    ----------
    root : str or PathLike, optional
        The data folder (default: ``$MULTIGROVE_DATA``, else ``../shared/data``); FileNotFoundError when absent.

    Returns
    -------
    X : ndarray of float32, shape (61878, 93)
    y : ndarray of int64, shape (61878,)
    """
    from .data.tables import numeric_columns, read_table
    path = _folder("otto", root) / "otto_train.csv.gz"
    table = read_table(str(path))
    names = table.column_names
    if names[0] != "id" or names[-1] != "target" or len(names) != 95:
        raise ValueError(f"{path}: unexpected header {names[:3]}...{names[-2:]}")
    X = numeric_columns(table.select(names[1:94]), str(path)).astype(np.float32)
    classes = np.asarray(table.column("target").to_pylist())
    if not all(c.startswith("Class_") for c in np.unique(classes)):
        raise ValueError(f"{path}: targets must be Class_1 .. Class_9")
    y = np.char.replace(classes.astype(str), "Class_", "").astype(np.int64) - 1
    return X, y


# ---------------------------------------------------------------------- synthetic data
def make_multioutput_regression(n_rows=10_000, n_features=20, n_targets=8, rank=3, noise=0.1, seed=0):
    """Targets sharing ``rank`` latent non-linear functions of the features (correlated outputs).

    Parameters
    ----------
    n_rows, n_features, n_targets : int
        ``n_features`` is at least ``max(6, rank + 3)``: the latent functions read features 0 to 5 (and one
        more each beyond rank 3).
    rank : int, default 3
        Latent functions the targets mix (each target is a random linear combination of them).
    noise : float, default 0.1
        Standard deviation of the Gaussian noise added to every target.
    seed : int, default 0

    Returns
    -------
    X : ndarray (n_rows, n_features)
    Y : ndarray (n_rows, n_targets)
    """
    rank = check_int(rank, "rank", 1)
    check_int(n_features, "n_features", max(6, rank + 3))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    Z = np.column_stack([np.sin(X[:, 0] * 2) + X[:, 1] ** 2 / 2, np.tanh(X[:, 2] * X[:, 3]),
                         np.abs(X[:, 4]) - X[:, 5]][:rank] + [X[:, 6 + i] for i in range(max(0, rank - 3))])
    W = rng.normal(size=(Z.shape[1], n_targets))
    Y = Z @ W + noise * rng.normal(size=(n_rows, n_targets))
    return X, Y


def make_multiclass(n_rows=10_000, n_features=20, n_classes=5, seed=0):
    """A multi-class problem from scikit-learn's ``make_classification`` (one cluster per class).

    Parameters
    ----------
    n_rows, n_features, n_classes : int
    seed : int, default 0

    Returns
    -------
    X : ndarray (n_rows, n_features)
    y : ndarray of int (n_rows,), classes 0..n_classes-1
    """
    from sklearn.datasets import make_classification
    n_inf = min(n_features - 2, max(n_features // 2, int(np.ceil(np.log2(n_classes))) + 1))
    return make_classification(n_samples=n_rows, n_features=n_features, n_informative=n_inf,
                               n_redundant=min(2, n_features - n_inf), n_classes=n_classes,
                               n_clusters_per_class=1, random_state=seed)


def make_extreme_multilabel(n_rows=100_000, n_features=50_000, n_labels=20_000, n_topics=1_000,
                            mean_labels=4.0, signature=15, keep=0.35, noise_words=60, zipf=1.1, seed=0):
    """A synthetic extreme multi-label problem with power-law label frequencies.

    Labels belong to topics; each topic owns a pool of feature ids (words) and each label a signature of
    ``signature`` words from its topic's pool.  A row draws 1 + Poisson(mean_labels - 1) labels by Zipf
    popularity (exponent ``zipf``, so a few head labels and a long tail), then for every label each
    signature word with probability ``keep``, plus ``noise_words`` words from a Zipf background.  Values
    are log(1 + word count).

    Parameters
    ----------
    n_rows, n_features, n_labels, n_topics : int
    mean_labels : float, default 4.0
    signature : int, default 15
    keep : float, default 0.35
    noise_words : int, default 60
    zipf : float, default 1.1
    seed : int, default 0

    Returns
    -------
    X : scipy.sparse.csr_matrix, float32
    Y : scipy.sparse.csr_matrix, float32 ones
    """
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    # label popularity: Zipf over a random order of the labels
    pop = 1.0 / np.arange(1, n_labels + 1) ** zipf
    pop = pop[rng.permutation(n_labels)]
    pop /= pop.sum()
    topic = rng.integers(0, n_topics, n_labels)
    pool_size = max(signature * 3, 30)
    pools = rng.integers(0, n_features, (n_topics, pool_size))
    sig = pools[topic[:, None], rng.integers(0, pool_size, (n_labels, signature))]
    # labels per row
    counts = np.minimum(1 + rng.poisson(max(mean_labels - 1.0, 0.0), n_rows), n_labels)
    rows = np.repeat(np.arange(n_rows), counts)
    labs = rng.choice(n_labels, size=rows.shape[0], p=pop)
    Y = sp.csr_matrix((np.ones(rows.shape[0], np.float32), (rows, labs)), shape=(n_rows, n_labels))
    Y.sum_duplicates()
    Y.data[:] = 1.0
    # words: signatures of the row's labels, thinned, plus background noise
    r_sig = np.repeat(rows, signature)
    w_sig = sig[labs].ravel()
    kept = rng.random(r_sig.shape[0]) < keep
    bg = 1.0 / np.arange(1, n_features + 1) ** 1.0
    bg = bg[rng.permutation(n_features)]
    bg /= bg.sum()
    r_bg = np.repeat(np.arange(n_rows), noise_words)
    w_bg = rng.choice(n_features, size=r_bg.shape[0], p=bg)
    r = np.concatenate([r_sig[kept], r_bg])
    w = np.concatenate([w_sig[kept], w_bg])
    X = sp.csr_matrix((np.ones(r.shape[0], np.float32), (r, w)), shape=(n_rows, n_features))
    X.sum_duplicates()
    X.data = np.log1p(X.data).astype(np.float32)
    return X, Y
