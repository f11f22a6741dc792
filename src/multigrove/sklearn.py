"""scikit-learn estimators: thin adapters over multigrove.train.

The constructors take ``n_estimators`` plus the parameter names of ``train`` with the
defaults of :class:`multigrove.Params` (one table of defaults for both layers).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ._validation import (
    check_features,
    check_features_and_categories,
    check_indicator,
    check_init_score,
    check_int,
    check_label,
    check_real,
    check_weight,
    counted_rows,
)
from .boosting.callbacks import early_stopping, record_evaluation
from .boosting.cv import cv
from .boosting.engine import train
from .boosting.losses import sparse_label
from .data.dataset import Dataset
from .params import SINGLE_OUTPUT_LEAVES, SPARSE_OUTPUT_OBJECTIVES, Params

_D = {f.name: f.default for f in dataclasses.fields(Params)}
#: early_stopping="auto" cross-validates on at most this many rows, where a held-out tenth is too small and
#: noisy to pick the rounds (slump 11 %, osales 8 % worse than no early stopping), while k + 1 fits still take
#: seconds; above it, it stops on a held-out tenth.  (From 2,000 to 10,000 rows it trained 100 rounds until
#: stop 43: stopping on the tenth instead lowered the test loss of three of the accuracy panel's four sets
#: there, rf1 0.0548 -> 0.0481, scm20d 0.3526 -> 0.3414, bibtex 0.0459 -> 0.0448, corel5k 0.0377 -> 0.0378.)
CV_MAX_ROWS = 2_000
#: the share of the training rows held out for early stopping when no eval_set is given
VALIDATION_FRACTION = 0.1
#: early_stopping="auto" on held-out rows (over CV_MAX_ROWS) of at most LEAF_SIZES_MAX_ROWS rows and
#: LEAF_SIZES_MAX_WORK training rows x features x outputs, where another fit costs seconds: multi-output trees
#: of num_leaves=None (MULTI_OUTPUT_LEAVES) are compared with trees of SINGLE_OUTPUT_LEAVES on the held-out
#: rows, and the smaller trees kept when their best validation loss is lower by LEAF_SIZES_MARGIN.  The right
#: tree size is the data's: on the loans table (7,200 rows, 7 grades) 31 leaves tested 1.1781 against 127
#: leaves' 1.2113 (validation 1.1949 against 1.2318), on rf1 (6,843 rows, 8 targets) 0.0635 against 0.0481,
#: on Otto 0.4531 against 0.4478 (CHANGELOG.md, stop 55)
#: Only where the early stopping ended the fit before its last round: smaller trees help where the large ones
#: overfit, and a validation loss still falling at the round limit shows none (loans's 127-leaf trees stopped at
#: round 61); trees of fewer leaves, which learn less a round, are then further from their best at the same
#: limit (rf1: 127 leaves 1.104 at round 999 of 1,000, 31 leaves 1.379 at round 1,000; the second fit cost 4-6 s)
LEAF_SIZES_MAX_ROWS = 10_000
LEAF_SIZES_MAX_WORK = 1 << 22
LEAF_SIZES_MARGIN = 0.01
#: cv_folds=None: the folds of early_stopping="cv" (and of "auto" on at most CV_MAX_ROWS rows), and from
#: CV_FEWER_FOLDS_MIN_ROWS training rows on CV_FEWER_FOLDS: a third of 1,000 rows or more validates each fold, and
#: the mean curve picked about the same rounds at 3/5 of the folds' trees (at 2 x 0.1, 5 folds against 3:
#: scene 220 and 220 rounds, the same test loss; yeast 96 and 92, 0.4312 and 0.4311; enron 144 and 122,
#: 0.1285 and 0.1288; CHANGELOG.md, stop 57)
CV_FOLDS = 5
CV_FEWER_FOLDS = 3
CV_FEWER_FOLDS_MIN_ROWS = 1_000
#: min_data_in_leaf=None where the fit cross-validates on folds of under CV_LEAF_SIZES_MAX_ROWS training rows
#: (where the scaled minimum of Params.min_data_for is 1 row): the folds also try these leaf sizes, and one
#: replaces the scaled minimum when its best mean validation loss is lower by CV_MARGIN or more (edm, 92 rows a
#: fold: the scaled minimum 1.08x CatBoost's test RMSE, 10 rows 0.996x).  On larger folds the candidates
#: changed no choice for the better on the 12 panel sets of 178-899 rows a fold studied (they picked 10 rows on
#: atp7d and jura, 2 % and 1 % worse on test) and 40-80 % of the time (CHANGELOG.md, stop 43)
CV_LEAF_SIZES = (10, 20)
CV_LEAF_SIZES_MAX_ROWS = 100
#: smaller differences of the cross-validated loss are within the folds' noise (enb: 20 rows scored 3 % better
#: than the scaled 11 and tested 13 % worse)
CV_MARGIN = 0.05
#: early_stopping="cv" (and "auto" on at most CV_MAX_ROWS rows) cross-validates at CV_RATE_FACTOR x learning_rate
#: (at most CV_MAX_LEARNING_RATE; 1 x from there on) where a fold has CV_LEAF_SIZES_MAX_ROWS rows or more, with
#: its rounds and patience divided by the factor, and the model trains the best round x the factor at
#: learning_rate.  After m rounds of shrinkage eta a boosted model has moved about eta x m along its path: the
#: best round at 2 eta is about half the one at eta, and the folds (5 x (best round + patience) trees, 5/6 of a
#: cross-validated fit's) train half as many.  On the 14 panel sets whose folds have 100 rows or more, the test
#: losses at the rounds picked at 2 x 0.1 (CHANGELOG.md, stop 57): the same or lower on 8, higher on emotions
#: (1.016x CatBoost's, was 1.012x), osales (0.998x, was 0.983x), oes97 (0.892x, 0.877x), atp7d, enron and scpf
#: (0.03-0.22 %); scene's fit 33 -> 13 s.  Smaller folds, whose fits take a few seconds, keep the rate:
#: slump's rounds at twice the rate and its leaf size tested 1.030x CatBoost's
CV_RATE_FACTOR = 2.0
CV_MAX_LEARNING_RATE = 0.2
#: n_iter_no_change=None: rounds without improvement before training stops, on a held-out tenth of over 2,000
#: rows (smooth curves: Otto's best round 269, stopped at 289, the same test loss as with 100 rounds of patience,
#: and Delicious P@k the same at 189 rounds as at 404) ...
PATIENCE_HELD_OUT = 20
#: ... and on the folds' mean curve of a cross-validation, flat and noisy near its best on small data, a
#: patience that grows with the best round: PATIENCE_CV_FRACTION of it, between PATIENCE_CV and PATIENCE_CV_MAX
#: rounds (rounds at learning_rate: at CV_RATE_FACTOR x the rate, that many times fewer).  osales's mean l2 at
#: 2 x 0.1 improves at rounds 40, 67, 82, 111 and 204: half the best round stopped it at 60 (its test RMSE at
#: 80 rounds of 0.1: 1.055x CatBoost's), 0.75 of it at 194 (222 rounds: 0.998x); sf1's best is round 4, and a
#: fixed 100 rounds trained 25 times as many
PATIENCE_CV = 20
PATIENCE_CV_FRACTION = 0.75
PATIENCE_CV_MAX = 100
#: n_estimators=None: the rounds of a fit without early stopping (LightGBM's and scikit-learn's 100) and
#: the most rounds of one that stops early (the validation loss picks the number: Otto's pure defaults
#: reach a test log loss of 0.448 instead of 0.480 with 100 rounds, CHANGELOG.md issue 23)
ROUNDS = 100
ROUNDS_STOPPING_EARLY = 1000
#: sparse-output objectives stop early on the validation P@5: P@1 of a round moves by about 0.005 from round
#: to round on Delicious's 1,292 validation rows and stops the fit near round 50, P@5 (five times the hits)
#: keeps rising with the test P@k (CHANGELOG.md, issue 19)
SPARSE_STOPPING_METRIC = "precision@5"
#: Params fields that are not constructor arguments: the estimator sets them from y
_SET_BY_ESTIMATOR = ("objective", "num_class", "num_outputs", "metric", "eval_at", "given")
#: constructor arguments passed through to train() under the same name: every other training parameter
_PASSED = tuple(f.name for f in dataclasses.fields(Params) if f.name not in _SET_BY_ESTIMATOR)

_PARAMETERS = """
    Every parameter means what it means for :func:`multigrove.train` (see :class:`multigrove.Params`).

    Parameters
    ----------
    n_estimators : int or None, default None
        Boosting rounds, at most (one multi-output tree a round, or one tree per output with
        one_vs_all).  None: 1000 when the fit stops early (early_stopping on, or an early stopping
        callback given), where the validation loss (or the cross-validated loss) picks the number of
        rounds, else 100.
    objective : None, "sparse_hinge" (GroveClassifier) or "sparse_squared" (GroveRegressor), default None
        None: chosen from y.  "sparse_hinge": multi-label y (0/1, dense or CSR) kept sparse, GBDT-Sparse's
        squared hinge with k-sparse leaves (leaf_sparsity, default 20); "sparse_squared": sparse real
        targets.  Their scores are CSR matrices and they are evaluated by precision@k.
    learning_rate : float, default 0.1
    num_leaves : int or None, default None
        Leaves per tree; None: 31 for one-output trees, 127 for a multi-output tree.
    max_depth : int, default -1
        -1: no limit.
    min_data_in_leaf : int or None, default None
        None: min(20, max(1, n_rows // 50)); when the fit cross-validates (early_stopping "cv", or
        "auto" on up to 2,000 rows) on folds of under 100 training rows (where that minimum is 1), the
        folds also try 10 and 20, and one of them is kept when its cross-validated loss is 5 % lower.
    min_sum_hessian_in_leaf : float, default 1e-3
    lambda_l2 : float, default 3.0
    min_gain_to_split : float, default 0.0
    multi_strategy : {"multi_output", "one_vs_all"}, default "multi_output"
        One tree for all outputs, or one tree per output per round.
    growth_policy : {"leafwise", "depthwise", "symmetric"}, default "leafwise"
        Best-first, level by level, or symmetric (oblivious) trees: one split shared by every node of
        a level, max_depth levels (-1: 6), 2^depth leaves (at most num_leaves when it is given).
    sketch : str or None, default None
        Score splits on a sketch of the gradients ("none", "top_outputs", "random_sampling",
        "random_projection", "svd", "auto"); None: "random_projection" for a multi-output tree of more
        than sketch_k outputs with dense leaves.
    sketch_k : int, default 3
    leaf_sparsity : int, default 0
        0: dense leaves; k: each leaf keeps its top-k outputs.
    sparse_split : {"unrestricted", "restricted"}, default "unrestricted"
    max_bin, bin_construct_sample_cnt : int, default 255 and 200000
    min_data_in_bin : int or None, default None
        The fewest sampled rows a value bin of a feature holds; None: 1, or LightGBM's 3 where the
        features' bins would number over 2^20 in all (wide sparse data) or over 64 a sampled row (a few
        hundred rows of hundreds of continuous features).
    is_enable_sparse, sparse_threshold, enable_bundle, max_conflict_rate
        Sparse features and exclusive feature bundling (see multigrove.Params).
    categorical_feature : "auto" or list of str or int, default "auto"
        Features split on sets of categories: a DataFrame's ``category`` columns, and the columns of
        integer codes listed here (names or indices).
    max_cat_to_onehot, max_cat_threshold, cat_smooth, cat_l2, min_data_per_group
        The set splits of categorical features (LightGBM's names; defaults None, 32, 10.0, 10.0, 100):
        None splits one category against the rest whatever the number of categories; LightGBM's 4 does so
        up to 4 and splits on sets of categories beyond (see multigrove.Params).
    cat_encoding : {"auto", "sets", "statistics"}, default "auto"
        Set splits, or ordered target statistics in a categorical feature's place; "auto": sets.
    data_sample_strategy : {"bagging", "goss"}, default "bagging"
    bagging_fraction, bagging_freq : float and int, default 1.0 and 0
    top_rate, other_rate : float, default 0.2 and 0.1
        GOSS.
    feature_fraction : float, default 1.0
    bagging_temperature : float, default 0.0
        > 0: Bayesian bootstrap, every round each row's gradients and Hessians are weighted by
        (-log U)^bagging_temperature (1: Exp(1) weights); at most 10.
    random_strength : float, default 0.0
        Gaussian noise on the split scores, in units of the gain a split on pure noise would have.
    early_stopping : {"auto", True, False, "cv"}, default "auto"
        True: stop when the validation loss has not improved for n_iter_no_change rounds and keep the
        best round: on an eval_set when one is given, else on validation_fraction of the training rows
        (held out, stratified for classes).  "cv": cross-validation on cv_folds folds of the training
        rows (:func:`multigrove.cv`) picks the round where the folds' mean validation loss is best,
        then the model trains that many rounds on every row (``cv_results_``); on folds of 100 rows or
        more the folds train at twice the learning rate (at most 0.2) and the model twice their best
        round, half the trees for about the same round.  "auto": True on more
        than 2,000 training rows, "cv" on 10 (2 x cv_folds) to 2,000 rows unless an eval_set is given,
        else no early stopping.  Rows of sample_weight 0 are dealt out apart: every fold, and the held-out
        rows, hold rows of positive weight, and "auto" counts only those for the folds' 2 x cv_folds.  On
        held-out rows, multi-output trees of num_leaves=None are also compared with 31-leaf trees on small
        data (``validation_candidates_``).  The Dask estimators:
        "auto" stops on an eval_set when one is given; "cv" and the comparison of tree sizes are not
        available.
    validation_fraction : float, default 0.1
    cv_folds : int or None, default None
        The folds of a cross-validation; None: 5, and 3 from 1,000 training rows on.
    n_iter_no_change : int or None, default None
        None: 20 on held-out rows or an eval_set; when cross-validating, 3/4 of the best round so far,
        at least 20 and at most 100 (the folds' mean curve of small data is flat and noisy near its best).
        Rounds at learning_rate: folds that train at twice the rate wait half as many.
    boost_from_average : bool, default True
    target_scaling : {"auto", "standard", "none"}, default "auto"
    metric_per_output : bool, default False
        Also report metrics per output in ``evals_result_`` (``l2[3]``).
    num_threads : int, default 0
        0: every core this process may use.
    histogram_pool_size : float, default -1.0
        MB the histograms kept for the subtraction trick may hold in leaf-wise growth; past it, the
        histogram of the leaf least likely to split next is dropped and built again from its rows if it
        splits; < 0: no limit.
    deterministic : bool, default False
        The same model whatever num_threads (histograms summed in row order on every thread count); CPU only
        (the GPU sums with atomic adds in any order).
    device_type : {"cpu", "cuda"}, default "cpu"
        "cuda": train on an NVIDIA GPU: gradients, histograms, partitions and score updates run there
        (``pip install 'multigrove[cuda]'``).
    seed : int, default 0
    verbosity : int, default 0
        -1 silent, 0 warnings, 1 also info lines.
    importance_type : {"split", "gain"}, default "split"
        What ``feature_importances_`` counts.
"""

_ATTRIBUTES = """
    Attributes
    ----------
    booster_ : multigrove.Booster
        The fitted model.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X had string column names.
    n_outputs_ : int
    evals_result_ : dict
        ``{data_name: {metric_name: [values]}}`` of the eval_set, one value per round.
    best_iteration_ : int
        The best round found by early stopping (0 when none ran).
    validation_indices_ : ndarray of int or None
        The training rows held out for early stopping (None when none were).
    cv_results_ : dict or None
        The cross-validation that picked the rounds (:func:`multigrove.cv`'s result: the folds' mean
        and standard deviation of each metric, round by round, up to the best round, at the folds'
        learning rate), or None.
    cv_candidates_ : list of dict
        With cross-validation: each setting compared (``min_data_in_leaf`` when it was None), the rounds
        the model trains for it (``rounds``), the folds' best round (``cv_rounds``) at their
        ``learning_rate``, its best mean validation score and the rounds the folds trained before
        stopping (``trained``).
    validation_candidates_ : list of dict or None
        With early stopping on held-out rows of a small set (at most 10,000 rows, and training rows x features
        x outputs at most 2^22), multi-output trees of num_leaves=None, and a first fit that stopped before its
        last round: each ``num_leaves`` tried, its best round (``rounds``) and its best validation score; the
        second (31 leaves) is the model when its score is lower by 1 %.  The callbacks given to fit run in both
        fits.
    feature_importances_ : ndarray (n_features,)
        The importance of each feature (``importance_type``).
    n_estimators_ : int
        Rounds the model holds.
"""


def _rows_of(rows: np.ndarray, *arrays) -> tuple:
    """The given rows of each array (None for a None array)."""
    return tuple(None if array is None else array[rows] for array in arrays)


def _is_default(name: str, value) -> bool:
    default = _D[name]
    return value is default or (type(value) is type(default) and value == default)


class _GroveBase(BaseEstimator):
    def __init__(self, n_estimators=None, *, objective=None, learning_rate=_D["learning_rate"],
                 num_leaves=_D["num_leaves"],
                 max_depth=_D["max_depth"], min_data_in_leaf=_D["min_data_in_leaf"],
                 min_sum_hessian_in_leaf=_D["min_sum_hessian_in_leaf"], lambda_l2=_D["lambda_l2"],
                 min_gain_to_split=_D["min_gain_to_split"], multi_strategy=_D["multi_strategy"],
                 growth_policy=_D["growth_policy"], sketch=_D["sketch"], sketch_k=_D["sketch_k"],
                 leaf_sparsity=_D["leaf_sparsity"], sparse_split=_D["sparse_split"], max_bin=_D["max_bin"],
                 min_data_in_bin=_D["min_data_in_bin"], bin_construct_sample_cnt=_D["bin_construct_sample_cnt"],
                 is_enable_sparse=_D["is_enable_sparse"],
                 sparse_threshold=_D["sparse_threshold"], enable_bundle=_D["enable_bundle"],
                 max_conflict_rate=_D["max_conflict_rate"], categorical_feature=_D["categorical_feature"],
                 max_cat_to_onehot=_D["max_cat_to_onehot"], max_cat_threshold=_D["max_cat_threshold"],
                 cat_smooth=_D["cat_smooth"], cat_l2=_D["cat_l2"], min_data_per_group=_D["min_data_per_group"],
                 cat_encoding=_D["cat_encoding"],
                 data_sample_strategy=_D["data_sample_strategy"],
                 bagging_fraction=_D["bagging_fraction"], bagging_freq=_D["bagging_freq"], top_rate=_D["top_rate"],
                 other_rate=_D["other_rate"], feature_fraction=_D["feature_fraction"],
                 bagging_temperature=_D["bagging_temperature"], random_strength=_D["random_strength"],
                 boost_from_average=_D["boost_from_average"], target_scaling=_D["target_scaling"],
                 metric_per_output=_D["metric_per_output"], early_stopping="auto",
                 validation_fraction=VALIDATION_FRACTION, cv_folds=None, n_iter_no_change=None,
                 num_threads=_D["num_threads"], histogram_pool_size=_D["histogram_pool_size"],
                 deterministic=_D["deterministic"], device_type=_D["device_type"], seed=_D["seed"],
                 verbosity=_D["verbosity"], importance_type="split"):
        self.n_estimators = n_estimators
        self.objective = objective
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_data_in_leaf = min_data_in_leaf
        self.min_sum_hessian_in_leaf = min_sum_hessian_in_leaf
        self.lambda_l2 = lambda_l2
        self.min_gain_to_split = min_gain_to_split
        self.multi_strategy = multi_strategy
        self.growth_policy = growth_policy
        self.sketch = sketch
        self.sketch_k = sketch_k
        self.leaf_sparsity = leaf_sparsity
        self.sparse_split = sparse_split
        self.max_bin = max_bin
        self.min_data_in_bin = min_data_in_bin
        self.bin_construct_sample_cnt = bin_construct_sample_cnt
        self.is_enable_sparse = is_enable_sparse
        self.sparse_threshold = sparse_threshold
        self.enable_bundle = enable_bundle
        self.max_conflict_rate = max_conflict_rate
        self.categorical_feature = categorical_feature
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_cat_threshold = max_cat_threshold
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.min_data_per_group = min_data_per_group
        self.cat_encoding = cat_encoding
        self.data_sample_strategy = data_sample_strategy
        self.bagging_fraction = bagging_fraction
        self.bagging_freq = bagging_freq
        self.top_rate = top_rate
        self.other_rate = other_rate
        self.feature_fraction = feature_fraction
        self.bagging_temperature = bagging_temperature
        self.random_strength = random_strength
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.cv_folds = cv_folds
        self.n_iter_no_change = n_iter_no_change
        self.boost_from_average = boost_from_average
        self.target_scaling = target_scaling
        self.metric_per_output = metric_per_output
        self.num_threads = num_threads
        self.histogram_pool_size = histogram_pool_size
        self.deterministic = deterministic
        self.device_type = device_type
        self.seed = seed
        self.verbosity = verbosity
        self.importance_type = importance_type

    # ------------------------------------------------------------------ shared machinery
    def _train_params(self, objective: str, extra: dict) -> dict:
        # only what differs from the defaults counts as given (Params.given: warnings on what has no effect)
        params = {name: getattr(self, name) for name in _PASSED if not _is_default(name, getattr(self, name))}
        params["objective"] = objective
        params.update(extra)
        return params

    def _check_X(self, X, reset: bool):
        """(X as check_features returns it, feature names or None, categories): a DataFrame's category columns
        as codes of their own lists when fitting, of the model's when predicting.  scikit-learn's
        validate_data only keeps its bookkeeping (n_features_in_, feature_names_in_ and their messages); the
        checks and the conversion are multigrove's one check_features."""
        if not reset:
            check_is_fitted(self, "booster_")
        checked = check_features_and_categories(X, name="X", categories=None if reset else self.booster_.categories)
        validate_data(self, X, skip_check_array=True, reset=reset)
        return checked

    def _check_estimator_params(self) -> None:
        """The constructor arguments that are not training parameters."""
        if self.n_estimators is not None and (isinstance(self.n_estimators, bool) or not isinstance(
                self.n_estimators, (int, np.integer)) or self.n_estimators < 1):
            raise ValueError(f"n_estimators must be an integer >= 1 or None, got {self.n_estimators!r}")
        if self.importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {self.importance_type!r}")
        if not (self.early_stopping in ("auto", "cv") or isinstance(self.early_stopping, (bool, np.bool_))):
            raise ValueError(f"early_stopping must be 'auto', 'cv', True or False, got {self.early_stopping!r}")
        if self.cv_folds is not None:
            check_int(self.cv_folds, "cv_folds", 2)
        check_real(self.validation_fraction, "validation_fraction", 0.0, low_open=True)
        if not self.validation_fraction < 1.0:
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}")
        if self.n_iter_no_change is not None:
            check_int(self.n_iter_no_change, "n_iter_no_change", 1)

    def _rounds(self, stops_early: bool) -> int:
        """n_estimators, or when it is None ROUNDS_STOPPING_EARLY or ROUNDS."""
        if self.n_estimators is not None:
            return int(self.n_estimators)
        return ROUNDS_STOPPING_EARLY if stops_early else ROUNDS

    def _patience(self, default: int) -> int:
        """n_iter_no_change, or ``default`` when it is None."""
        return default if self.n_iter_no_change is None else int(self.n_iter_no_change)

    def _n_folds(self, n_rows: int) -> int:
        """cv_folds, or when it is None CV_FOLDS (CV_FEWER_FOLDS from CV_FEWER_FOLDS_MIN_ROWS rows)."""
        if self.cv_folds is not None:
            return int(self.cv_folds)
        return CV_FEWER_FOLDS if n_rows >= CV_FEWER_FOLDS_MIN_ROWS else CV_FOLDS

    def _stopping(self, n_rows: int, n_counted: int, callbacks, eval_set) -> str | None:
        """How fit stops early: "validation" (on the eval_set, else on held-out rows), "cv" (cross-validation
        picks the rounds) or None; None when a callback already stops early.  ``n_counted``: the rows of positive
        sample_weight (every row unweighted), which "auto" needs two a fold of, or two to hold out from."""
        if has_early_stopping(callbacks):
            return None
        if self.early_stopping == "auto":
            if n_rows > CV_MAX_ROWS:
                return "validation" if eval_set or n_counted >= 2 else None
            return "cv" if not eval_set and 2 * self._n_folds(n_rows) <= n_counted else None
        if self.early_stopping == "cv":
            n_folds = self._n_folds(n_rows)
            if n_counted < 2 * n_folds:
                rows = "training rows" if n_counted == n_rows else "training rows of positive sample_weight"
                raise ValueError(f"early_stopping='cv' with cv_folds={n_folds} needs at least "
                                 f"{2 * n_folds} {rows}, got {n_counted}")
            return "cv"
        return "validation" if self.early_stopping else None

    def _validation_split(self, y, objective: str, weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(training rows, validation rows): validation_fraction of the rows drawn with the seed, stratified by
        class for binary and multiclass labels when every class has two rows.  Where some rows weigh 0, the rows
        of positive weight are drawn (and stratified) apart from those of weight 0, so that both parts hold rows
        that count: a validation part whose rows all weigh 0 would have no loss to stop on."""
        n = y.shape[0]
        counted = counted_rows(weight, n)
        if counted.size < 2:
            raise ValueError(f"early stopping on validation_fraction={self.validation_fraction} of the rows needs "
                             f"two rows of positive sample_weight, got {counted.size}: give more, or "
                             "early_stopping=False")
        fit_rows, valid_rows = self._draw_validation(counted, y[counted], objective)
        if counted.size < n:
            weightless = np.flatnonzero(weight <= 0)
            fit_more, valid_more = (weightless, weightless[:0]) if weightless.size < 2 else train_test_split(
                weightless, test_size=self.validation_fraction, random_state=self.seed)
            fit_rows, valid_rows = np.concatenate([fit_rows, fit_more]), np.concatenate([valid_rows, valid_more])
        return np.sort(fit_rows), np.sort(valid_rows)

    def _draw_validation(self, rows: np.ndarray, y, objective: str) -> tuple[np.ndarray, np.ndarray]:
        """(training rows, validation rows) of ``rows`` (labels ``y``) as _validation_split draws them."""
        stratify = None
        if objective in ("binary", "multiclass") and np.bincount(y.astype(np.int64)).min(initial=y.shape[0]) >= 2:
            stratify = y
        fit_rows, valid_rows = train_test_split(rows, test_size=self.validation_fraction, random_state=self.seed,
                                                stratify=stratify)
        if fit_rows.size == 0 or valid_rows.size == 0:
            raise ValueError(f"validation_fraction={self.validation_fraction} leaves no training or no validation "
                             f"rows of {rows.size}: give more rows, another fraction, or early_stopping=False")
        return fit_rows, valid_rows

    def _fit(self, X, y_internal, objective, extra, sample_weight, eval_set, eval_sample_weight,
             eval_names, callbacks, eval_label_fn, init_model=None, offsets=(None, None)):
        self._check_estimator_params()
        Xc, names, categories = X
        w = check_weight(sample_weight, Xc.shape[0], name="sample_weight")
        start = check_init_score(offsets[0], Xc.shape[0])
        eval_offsets = offsets[1]
        for extra_name, per_pair in (("eval_init_score", eval_offsets), ("eval_sample_weight", eval_sample_weight)):
            if per_pair is not None and len(per_pair) != len(eval_set or []):
                raise ValueError(f"{extra_name} has {len(per_pair)} entries for {len(eval_set or [])} eval_set "
                                 "pairs: give one per pair (None for a pair without)")
        cbs = list(callbacks or [])
        valid_sets, valid_names = [], []
        self.validation_indices_ = None
        held_out = None
        n_counted = counted_rows(w, Xc.shape[0]).size
        stopping = self._stopping(Xc.shape[0], n_counted, callbacks, eval_set)
        rounds = self._rounds(stopping is not None or has_early_stopping(cbs))
        watch = SPARSE_STOPPING_METRIC if objective in SPARSE_OUTPUT_OBJECTIVES else None
        self.cv_results_ = self.cv_candidates_ = None
        if stopping == "cv":
            rounds, chosen = self._cross_validate(Xc, y_internal, w, start, names, categories, objective, extra,
                                                  rounds, watch, init_model)
            extra = {**extra, **chosen}
        if stopping == "validation":
            cbs.append(early_stopping(self._patience(PATIENCE_HELD_OUT), verbose=False, metric_name=watch))
            if not eval_set:  # hold out validation_fraction of the training rows
                fit_rows, valid_rows = self._validation_split(y_internal, objective, w)
                self.validation_indices_ = valid_rows
                held_out = _rows_of(valid_rows, Xc, y_internal, w, start)
                Xc, y_internal, w, start = _rows_of(fit_rows, Xc, y_internal, w, start)
        train_set = Dataset(Xc, y_internal, weight=w, feature_names=names, init_score=start, categories=categories)
        if held_out is not None:
            valid_sets.append(Dataset(held_out[0], held_out[1], weight=held_out[2], reference=train_set,
                                      init_score=held_out[3]))
            valid_names.append("validation")
        for i, pair in enumerate(eval_set or []):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise ValueError(f"eval_set[{i}] must be a pair (X, y)")
            Xv, _ = check_features(pair[0], name=f"eval_set[{i}] X", n_features=Xc.shape[1], expected_names=names,
                                   expected_by="the training X", categories=categories)
            wv = None if eval_sample_weight is None else check_weight(eval_sample_weight[i], Xv.shape[0],
                                                                      name=f"eval_sample_weight[{i}]")
            valid_sets.append(Dataset(Xv, eval_label_fn(pair[1]), weight=wv, reference=train_set,
                                      init_score=None if eval_offsets is None else eval_offsets[i]))
            valid_names.append(eval_names[i] if eval_names and i < len(eval_names) else f"valid_{i}")
        self.evals_result_ = {}
        recorded = [record_evaluation(self.evals_result_)] if valid_sets else []
        params = self._train_params(objective, extra)
        self.booster_ = train(params, train_set, num_boost_round=rounds, valid_sets=valid_sets,
                              valid_names=valid_names, callbacks=cbs + recorded, init_model=_init_booster(init_model))
        self.validation_candidates_ = None
        if held_out is not None and init_model is None and self._tries_leaf_sizes(Xc.shape[0] + held_out[0].shape[0],
                                                                                  train_set, rounds):
            self._pick_leaf_size(params, train_set, rounds, valid_sets, valid_names, cbs)
        self.best_iteration_ = self.booster_.best_iteration
        return self

    def _tries_leaf_sizes(self, n_rows: int, train_set: Dataset, rounds: int) -> bool:
        """Whether a fit that stops on held-out rows also tries SINGLE_OUTPUT_LEAVES: multi-output trees of
        num_leaves=None, at most LEAF_SIZES_MAX_ROWS rows (``n_rows``, the held-out ones included) and
        LEAF_SIZES_MAX_WORK training rows x features x outputs, whose early stopping ended the fit before its
        ``rounds`` (the comment above LEAF_SIZES_MAX_ROWS says why)."""
        booster = self.booster_
        n_outputs = booster.n_outputs
        return (self.num_leaves is None and self.growth_policy != "symmetric"
                and booster.multi_strategy == "multi_output" and n_outputs > 1 and n_rows <= LEAF_SIZES_MAX_ROWS
                and train_set.n_rows * train_set.n_features * n_outputs <= LEAF_SIZES_MAX_WORK
                and booster.current_iteration() < rounds)

    def _pick_leaf_size(self, params: dict, train_set: Dataset, rounds: int, valid_sets: list, valid_names: list,
                        callbacks: list) -> None:
        """Train SINGLE_OUTPUT_LEAVES-leaf trees too (``callbacks``, the user's and the early stopping, run again)
        and keep them when their best validation loss is lower than the fitted model's by LEAF_SIZES_MARGIN
        (relative); sets validation_candidates_."""
        def best(evals: dict) -> float:
            return float(np.min(next(iter(evals["validation"].values()))))
        candidates = [{"num_leaves": Params.from_dict(params).leaves_for(self.booster_.n_outputs),
                       "rounds": self.booster_.best_iteration, "score": best(self.evals_result_)}]
        evals: dict = {}
        booster = train({**params, "num_leaves": SINGLE_OUTPUT_LEAVES}, train_set, num_boost_round=rounds,
                        valid_sets=valid_sets, valid_names=valid_names,
                        callbacks=[*callbacks, record_evaluation(evals)])
        candidates.append({"num_leaves": SINGLE_OUTPUT_LEAVES, "rounds": booster.best_iteration, "score": best(evals)})
        self.validation_candidates_ = candidates
        if candidates[1]["score"] <= candidates[0]["score"] * (1.0 - LEAF_SIZES_MARGIN):
            self.booster_, self.evals_result_ = booster, evals

    def _cv_rate_factor(self, n_fit: int) -> float:
        """How many times learning_rate a cross-validation on folds of ``n_fit`` training rows trains at:
        CV_RATE_FACTOR, or less so as to stay at most CV_MAX_LEARNING_RATE (1 from there on, and on folds of
        under CV_LEAF_SIZES_MAX_ROWS rows)."""
        if n_fit < CV_LEAF_SIZES_MAX_ROWS:
            return 1.0
        rate = check_real(self.learning_rate, "learning_rate", 0.0, low_open=True)  # Params' check, before dividing
        return max(1.0, min(CV_RATE_FACTOR, CV_MAX_LEARNING_RATE / rate))

    def _cross_validate(self, X, y, w, start, names, categories, objective: str, extra: dict, rounds: int,
                        watch: str | None, init_model) -> tuple[int, dict]:
        """(rounds, parameters chosen) by cross-validation on the training rows: the rounds at the folds' best
        mean validation metric and, when min_data_in_leaf is None and a fold has under CV_LEAF_SIZES_MAX_ROWS
        rows, the leaf size: the scaled minimum unless one of CV_LEAF_SIZES scores better by CV_MARGIN.  The
        folds train at _cv_rate_factor() x learning_rate, their rounds and patience divided by it, and the
        best round is multiplied by it back (CV_RATE_FACTOR).  Sets cv_results_ and cv_candidates_."""
        params = self._train_params(objective, extra)
        n_folds = self._n_folds(X.shape[0])
        n_fit = X.shape[0] - X.shape[0] // n_folds  # a fold's training rows
        speedup = self._cv_rate_factor(n_fit)
        if speedup > 1.0:
            params["learning_rate"] = speedup * float(self.learning_rate)
        sizes = [None]  # min_data_in_leaf as given, or None's scaled minimum (each fit scales it to its rows)
        if self.min_data_in_leaf is None and n_fit < CV_LEAF_SIZES_MAX_ROWS:
            sizes += [m for m in CV_LEAF_SIZES if 2 * m <= n_fit and m != Params().min_data_for(n_fit)]
        results, self.cv_candidates_ = [], []
        for size in sizes:
            chosen = {} if size is None else {"min_data_in_leaf": size}
            growing = {} if self.n_iter_no_change is not None else \
                {"patience_fraction": PATIENCE_CV_FRACTION, "max_stopping_rounds": _at_rate(PATIENCE_CV_MAX, speedup)}
            stop = early_stopping(_at_rate(self._patience(PATIENCE_CV), speedup), verbose=False, metric_name=watch,
                                  per_output=False, **growing)
            every_round: dict = {}
            result = cv({**params, **chosen}, Dataset(X, y, weight=w, feature_names=names, init_score=start,
                                                      categories=categories),
                        num_boost_round=_at_rate(rounds, speedup), nfold=n_folds,
                        callbacks=[stop, record_evaluation(every_round)], init_model=_init_booster(init_model))
            curve = result[f"valid {watch}-mean"] if watch else next(iter(result.values()))
            results.append(result)
            trained = len(next(iter(every_round["valid"].values())))
            self.cv_candidates_.append(dict(chosen, rounds=min(rounds, round(speedup * len(curve))),
                                            cv_rounds=len(curve), score=curve[-1], trained=trained,
                                            learning_rate=params.get("learning_rate", self.learning_rate)))
        # losses fall, the sparse objectives' P@5 rises; a candidate must beat the best so far by the margin
        sign = -1.0 if watch is not None else 1.0
        margin = CV_MARGIN * abs(self.cv_candidates_[0]["score"])
        pick = 0
        for i, cand in enumerate(self.cv_candidates_[1:], start=1):
            if sign * cand["score"] <= sign * self.cv_candidates_[pick]["score"] - margin:
                pick = i
        self.cv_results_ = results[pick]
        chosen = {k: v for k, v in self.cv_candidates_[pick].items() if k == "min_data_in_leaf"}
        return self.cv_candidates_[pick]["rounds"], chosen

    def _fit_sparse(self, X, y, sample_weight, eval_set, eval_sample_weight, eval_names, callbacks, init_model,
                    offsets=(None, None)):
        """Fit with a sparse-output objective: y and every eval_set y become CSR (n_samples, n_outputs)."""
        objective = self.objective
        n = X[0].shape[0]

        def sparse_y(yv, n_rows, name):
            if yv is None:
                raise ValueError(f"requires {name} to be passed, but it is None")
            Y = sparse_label(yv, name)  # 2-D, structure, NaN and magnitude checked
            if n_rows is not None and Y.shape[0] != n_rows:
                raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n_rows} rows: lengths must match")
            if objective == "sparse_hinge":
                check_indicator(Y, None, name)
            return Y
        Y = sparse_y(y, n, "y")
        self.n_outputs_ = Y.shape[1]

        def eval_label(yv):
            Yv = sparse_y(yv, None, "eval_set y")
            if Yv.shape[1] != self.n_outputs_:
                raise ValueError(f"eval_set y has {Yv.shape[1]} outputs, expected {self.n_outputs_}")
            return Yv
        return self._fit(X, Y, objective, {}, sample_weight, eval_set, eval_sample_weight, eval_names, callbacks,
                         eval_label, init_model, offsets)

    @property
    def feature_importances_(self) -> np.ndarray:
        check_is_fitted(self, "booster_")
        return self.booster_.feature_importance(self.importance_type)

    @property
    def n_estimators_(self) -> int:
        check_is_fitted(self, "booster_")
        return self.booster_.current_iteration()


class GroveRegressor(RegressorMixin, _GroveBase):
    __doc__ = """Gradient boosted trees for one target (y 1-D) or many targets (y 2-D, one tree for all).

    NaN in y marks a missing target: that cell is left out of the loss, the gradients and the metrics.
""" + _PARAMETERS + _ATTRIBUTES

    def __getattr__(self, name):
        # only for names normal lookup misses: hasattr(regressor, "predict_proba") stays False, as scikit-learn's
        # tools expect of a regressor, and the error says where probabilities come from
        if name in ("predict_proba", "predict_log_proba"):
            raise AttributeError(f"GroveRegressor has no {name}: a regressor predicts values (predict); class "
                                 "probabilities come from multigrove.GroveClassifier")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def fit(self, X, y, sample_weight=None, eval_set=None, eval_sample_weight=None, eval_names=None,
            callbacks=None, init_model=None, init_score=None, eval_init_score=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like, pandas DataFrame or scipy.sparse matrix, shape (n_samples, n_features)
        y : array-like, shape (n_samples,) or (n_samples, n_targets)
            NaN marks a missing target: that cell is left out of the loss, the gradients and the metrics.
        sample_weight : array-like, shape (n_samples,), optional
        eval_set : list of (X, y) pairs, optional
            Evaluated after every round (``evals_result_``); early stopping callbacks watch them.
        eval_sample_weight : list of arrays, optional
        eval_names : list of str, optional
        callbacks : list of callables, optional
            See :func:`multigrove.early_stopping`, :func:`multigrove.log_evaluation`.
        init_model : Booster, path of a saved model, or a fitted estimator of this class, optional
            Continue training from this model (n_estimators more rounds).
        init_score : array-like, shape (n_samples,) or (n_samples, n_outputs), optional
            Raw scores each row starts from instead of the best constant (see :class:`multigrove.Dataset`);
            ``predict`` does not add them: add them to ``predict(X, raw_score=True)`` yourself.
        eval_init_score : list of arrays, optional
            The same for each eval_set pair (None for one without).

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        Xc = self._check_X(X, reset=True)
        if self.objective not in (None, "sparse_squared"):
            raise ValueError(f"objective must be None or 'sparse_squared' for GroveRegressor, got {self.objective!r}")
        if self.objective == "sparse_squared":
            return self._fit_sparse(Xc, y, sample_weight, eval_set, eval_sample_weight, eval_names, callbacks,
                                    init_model, (init_score, eval_init_score))
        y = _regression_target(y, Xc[0].shape[0])
        self.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
        n_out = self.n_outputs_

        def eval_label(yv):
            yv = _regression_target(yv, None)
            if (1 if yv.ndim == 1 else yv.shape[1]) != n_out:
                raise ValueError(f"eval_set y has {1 if yv.ndim == 1 else yv.shape[1]} targets, expected {n_out}")
            return yv
        return self._fit(Xc, y, "regression", {}, sample_weight, eval_set, eval_sample_weight, eval_names,
                         callbacks, eval_label, init_model, (init_score, eval_init_score))

    def predict(self, X, raw_score=False, num_iteration=None, pred_contrib=False):
        """Predicted targets; with ``pred_contrib=True`` the SHAP values of each prediction.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix, shape (n_samples, n_features)
        raw_score : bool, default False
            Scores in training units before any link (the same as predictions for regression).
        num_iteration : int, optional
            Rounds to use (default: ``best_iteration_``, else all).
        pred_contrib : bool, default False
            Return SHAP values (see :meth:`multigrove.Booster.predict`).

        Returns
        -------
        ndarray, shape (n_samples,) or (n_samples, n_targets)
        """
        Xc, _, _ = self._check_X(X, reset=False)
        return self.booster_.predict(Xc, raw_score=raw_score, num_iteration=num_iteration, pred_contrib=pred_contrib)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags


class GroveClassifier(ClassifierMixin, _GroveBase):
    __doc__ = """Gradient boosted trees for classification.

    y 1-D: class labels of any type (two classes: binary objective, more: softmax, one multi-output
    tree per round).  y 2-D 0/1 indicator (dense or scipy.sparse): multi-label, one sigmoid per label;
    predict returns a 0/1 matrix and predict_proba (n, n_labels).
""" + _PARAMETERS + _ATTRIBUTES + """    classes_ : ndarray
        The class labels (multi-label: 0..n_labels-1).
    n_classes_ : int
        The number of classes (multi-label: of labels).
    multilabel_ : bool
        Whether y was a label matrix.
"""

    def fit(self, X, y, sample_weight=None, eval_set=None, eval_sample_weight=None, eval_names=None,
            callbacks=None, init_model=None, init_score=None, eval_init_score=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like, pandas DataFrame or scipy.sparse matrix, shape (n_samples, n_features)
        y : array-like, shape (n_samples,), or a 0/1 indicator matrix (n_samples, n_labels), dense or sparse
            With an indicator matrix, NaN marks a missing label (dense y only): that cell is left out of the
            loss, the gradients and the metrics.
        sample_weight : array-like, shape (n_samples,), optional
        eval_set : list of (X, y) pairs, optional
        eval_sample_weight : list of arrays, optional
        eval_names : list of str, optional
        callbacks : list of callables, optional
        init_model : Booster, path of a saved model, or a fitted estimator of this class, optional
            Continue training from this model (n_estimators more rounds); the classes must match.
        init_score : array-like, shape (n_samples,) or (n_samples, n_outputs), optional
            Raw scores each row starts from instead of the best constant (see :class:`multigrove.Dataset`);
            ``predict`` does not add them: add them to ``predict(X, raw_score=True)`` yourself.
        eval_init_score : list of arrays, optional
            The same for each eval_set pair (None for one without).

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        Xc = self._check_X(X, reset=True)
        n = Xc[0].shape[0]
        if self.objective not in (None, "sparse_hinge"):
            raise ValueError(f"objective must be None or 'sparse_hinge' for GroveClassifier, got {self.objective!r}")
        if self.objective == "sparse_hinge":
            self.multilabel_ = True
            self._fit_sparse(Xc, y, sample_weight, eval_set, eval_sample_weight, eval_names, callbacks, init_model,
                             (init_score, eval_init_score))
            self.classes_, self.n_classes_ = np.arange(self.n_outputs_), self.n_outputs_
            return self
        if sp.issparse(y):
            y = y.toarray()
        y = np.asarray(y)
        if y.ndim == 0 or y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0] if y.ndim else 0} rows but X has {n} rows: lengths must match")
        multilabel = y.ndim == 2 and y.shape[1] > 1
        if multilabel:
            Y = _indicator(y, n, "y")  # a 0/1 indicator (NaN: a missing label), or a clear error
            self.multilabel_ = True
            self.classes_ = np.arange(Y.shape[1])
            self.n_classes_ = Y.shape[1]
            self.n_outputs_ = Y.shape[1]
            n_lab = Y.shape[1]

            def eval_label(yv):
                Yv = _indicator(yv.toarray() if sp.issparse(yv) else np.asarray(yv), None, "eval_set y")
                if Yv.ndim != 2 or Yv.shape[1] != n_lab:
                    raise ValueError(f"eval_set y must be an indicator matrix with {n_lab} columns")
                return Yv
            return self._fit(Xc, Y, "multilabel", {}, sample_weight, eval_set, eval_sample_weight, eval_names,
                             callbacks, eval_label, init_model, (init_score, eval_init_score))
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        objective, extra = self._set_classes(classes)

        def eval_label(yv):
            return class_codes(classes, yv, "eval_set y")
        return self._fit(Xc, codes, objective, extra, sample_weight, eval_set, eval_sample_weight, eval_names,
                         callbacks, eval_label, init_model, (init_score, eval_init_score))

    def _set_classes(self, classes: np.ndarray) -> tuple[str, dict]:
        """Record the classes of a 1-D y (the fitted attributes); return the objective and its extra
        parameters (two classes: binary, more: multiclass)."""
        k = classes.shape[0]
        if k < 2:
            raise ValueError(f"y holds only one class ({classes[0]!r}); a classifier needs at least 2 classes")
        self.classes_, self.multilabel_, self.n_classes_ = classes, False, k
        self.n_outputs_ = 1 if k == 2 else k
        return ("binary", {}) if k == 2 else ("multiclass", {"num_class": k})

    def predict_proba(self, X, num_iteration=None):
        """Class probabilities.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix, shape (n_samples, n_features)
        num_iteration : int, optional
            Rounds to use (default: ``best_iteration_``, else all).

        Returns
        -------
        ndarray, shape (n_samples, n_classes), or (n_samples, n_labels) of independent probabilities
        """
        Xc, _, _ = self._check_X(X, reset=False)
        if self.objective == "sparse_hinge":
            raise ValueError("objective 'sparse_hinge' gives scores, not probabilities: use decision_function "
                             "(CSR scores), predict (CSR 0/1, score > 0.5) or predict_top_k")
        prob = self.booster_.predict(Xc, num_iteration=num_iteration)
        if not self.multilabel_ and self.n_classes_ == 2:
            return np.column_stack([1.0 - prob, prob])
        return prob

    def predict(self, X, num_iteration=None, pred_contrib=False):
        """Predicted classes, or a 0/1 matrix for multi-label y; with ``pred_contrib=True`` the SHAP values of
        the raw scores.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix, shape (n_samples, n_features)
        num_iteration : int, optional
            Rounds to use (default: ``best_iteration_``, else all).
        pred_contrib : bool, default False
            Return SHAP values (see :meth:`multigrove.Booster.predict`).

        Returns
        -------
        ndarray, shape (n_samples,) or (n_samples, n_labels)
        """
        if pred_contrib:
            Xc, _, _ = self._check_X(X, reset=False)
            return self.booster_.predict(Xc, num_iteration=num_iteration, pred_contrib=True)
        if self.objective == "sparse_hinge":  # the hinge's decision boundary is 0.5
            scores = self.decision_function(X, num_iteration=num_iteration)
            return (scores > 0.5).astype(np.int64)  # CSR holding the ones only
        proba = self.predict_proba(X, num_iteration=num_iteration)
        if self.multilabel_:
            return (proba > 0.5).astype(np.int64)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_top_k(self, X, k=5, num_iteration=None):
        """Every row's k most probable classes or labels, best first, with their probabilities.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix, shape (n_samples, n_features)
        k : int, default 5
            At most the number of classes (labels).
        num_iteration : int, optional

        Returns
        -------
        classes : ndarray, shape (n_samples, k)
            Class labels (``classes_`` entries; label ids for multi-label y), best first (ties: the
            earlier class).
        probabilities : ndarray of float64, shape (n_samples, k)
            Their predicted probabilities.  For multi-label and multi-class models the leaf values are
            merged sparsely (see :meth:`multigrove.Booster.predict`, ``top_k``); the pair of label ids
            and scores is what ``multigrove.xmc.metrics`` takes.
        """
        k = check_int(k, "k", 1, self.n_classes_, "the model's classes or labels")
        if self.objective == "sparse_hinge":
            Xc, _, _ = self._check_X(X, reset=False)
            return self.booster_.predict(Xc, num_iteration=num_iteration, top_k=k)
        if not self.multilabel_ and self.n_classes_ == 2:
            proba = self.predict_proba(X, num_iteration=num_iteration)
            order = np.argsort(-proba, axis=1, kind="stable")[:, :k]
            return self.classes_[order], np.take_along_axis(proba, order, axis=1)
        Xc, _, _ = self._check_X(X, reset=False)
        idx, scores = self.booster_.predict(Xc, num_iteration=num_iteration, top_k=k)
        return (idx if self.multilabel_ else self.classes_[idx]), scores

    def decision_function(self, X, num_iteration=None):
        """Raw scores (log-odds for binary and multi-label, softmax inputs for multi-class).

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix, shape (n_samples, n_features)
        num_iteration : int, optional

        Returns
        -------
        ndarray, shape (n_samples,) or (n_samples, n_outputs)
        """
        Xc, _, _ = self._check_X(X, reset=False)
        return self.booster_.predict(Xc, raw_score=True, num_iteration=num_iteration)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags


def has_early_stopping(callbacks) -> bool:
    """Whether one of the callbacks is an early stopping callback (``multigrove.early_stopping``)."""
    return any(getattr(cb, "stops_early", False) for cb in callbacks or [])


def class_codes(classes: np.ndarray, y, name: str) -> np.ndarray:
    """The positions of y's labels in the sorted ``classes`` (a label not among them raises, naming it)."""
    y = np.asarray(y).reshape(-1)
    idx = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    bad = classes[idx] != y
    if bad.any():
        raise ValueError(f"{name} holds label {y[np.flatnonzero(bad)[0]]}, "
                         f"not among the training classes {classes[:10].tolist()}")
    return idx


def _at_rate(rounds: int, speedup: float) -> int:
    """``rounds`` at learning_rate in rounds at ``speedup`` x learning_rate (at least one)."""
    return max(1, math.ceil(rounds / speedup))


def _init_booster(init_model):
    """The Booster to continue from: given, loaded by train() from a path, or a fitted estimator's."""
    if isinstance(init_model, _GroveBase):
        check_is_fitted(init_model, "booster_")
        return init_model.booster_
    return init_model


def _regression_target(y, n_rows):
    """Regression targets as the Dataset checks them (the one label check), errors as ValueError."""
    try:
        return check_label(y, n_rows, name="y", data_name="X")
    except TypeError as exc:  # scikit-learn's convention for targets that are not numbers
        raise ValueError(str(exc)) from None


def _indicator(y, n_rows, name):
    return check_indicator(y, n_rows, name, missing_ok=True)
