"""Command line: ``multigrove train | predict | evaluate | xmc train | xmc predict | demo | compile``.

Data files, by suffix (``.gz`` allowed for the text formats) or ``--format``:

* tables: CSV (``.csv``; ``.tsv`` tab-separated) with a header row, Parquet (``.parquet``), ARFF
  (``.arff``), ``.npz`` with arrays ``X`` and optionally ``y``: the targets are the last ``--targets``
  columns.  Missing values (empty, ``NA``, ``NaN``, ``?``, ...) are NaN.  A sparse ARFF file stays
  sparse: its features reach the model as a CSR matrix, never densified.
* multi-label files, whose rows carry label sets: LIBSVM multi-label (``.svm``, ``.libsvm``), the
  XMC repository format (``.xmc``, ``.txt``: a header ``N D L``) and ``.npz`` written by
  ``multigrove.xmc.io.save_npz``.  Features stay CSR; the labels become the 0/1 indicator matrix of
  a multi-label objective.

``--config FILE.toml`` holds parameters under the names ``train`` takes (aliases too), and for
``train`` also ``num_boost_round``; ``--param key=value`` entries override it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._validation import check_feature_names, default_feature_names

FORMATS = ("csv", "tsv", "parquet", "arff", "npz", "libsvm", "xmc")
_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet", ".arff": "arff",
             ".npz": "npz", ".svm": "libsvm", ".libsvm": "libsvm", ".xmc": "xmc", ".txt": "xmc"}


class Data(NamedTuple):
    """What a data file holds: features (dense or CSR), targets (dense, CSR for label sets, or None),
    feature names, and whether the targets are label sets."""
    X: object
    Y: object
    names: list
    label_sets: bool


def _fail(message: str) -> SystemExit:
    return SystemExit(f"error: {message}")


def file_format(path: str, given: str | None) -> str:
    """The format of a data file: ``given``, else from its suffix (``.gz`` ignored)."""
    if given is not None:
        return given
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if suffix not in _SUFFIXES:
        raise _fail(f"{path}: cannot tell the format from the suffix {suffix!r}; pass --format "
                    f"({', '.join(FORMATS)})")
    return _SUFFIXES[suffix]


def _split_targets(matrix, names: list, targets: int, path: str) -> Data:
    if targets == 0:
        return Data(matrix, None, list(names), False)
    if not 0 < targets < matrix.shape[1]:
        raise _fail(f"--targets must be between 1 and {matrix.shape[1] - 1} for {path}, got {targets}")
    X, Y = matrix[:, :-targets], matrix[:, -targets:]
    if sp.issparse(Y):  # a sparse file: the features stay CSR, the few target columns go dense
        X, Y = X.tocsr(), Y.toarray()
    return Data(X, Y, list(names[:-targets]), False)


def _npz(path: str, targets: int) -> Data:
    from ._fileio import open_npz
    from .xmc.io import load_npz
    fname, z = open_npz(path, ".npz file")
    with z:
        files = set(z.files)
        if "format" in files:
            pass
        elif "X" not in files:
            raise _fail(f"{fname}: expected an array 'X' (and optionally 'y'), or a file written by "
                        f"multigrove.xmc.io.save_npz; found {sorted(files)}")
        else:
            X = np.asarray(z["X"], dtype=np.float64)
            Y = z["y"] if "y" in files else (z["Y"] if "Y" in files else None)
            if X.ndim != 2:
                raise _fail(f"{fname}: X must be 2-D, got shape {X.shape}")
            names = default_feature_names(X.shape[1])
            if Y is None:
                return _split_targets(X, names, targets, fname) if targets else Data(X, None, names, False)
            Y = np.asarray(Y, dtype=np.float64)
            return Data(X, Y.reshape(Y.shape[0], -1), names, False)
    X, Y = load_npz(path)
    return Data(X, Y, default_feature_names(X.shape[1]), True)


def read_data(path: str, targets: int = 1, fmt: str | None = None) -> Data:
    """Read a data file (see the module docstring); a malformed file names the file and the line."""
    if not Path(path).exists():
        raise _fail(f"data file {path!r} does not exist")
    fmt = file_format(path, fmt)
    try:
        if fmt in ("libsvm", "xmc"):
            from .xmc.io import read_libsvm, read_xmc
            X, Y = read_xmc(path) if fmt == "xmc" else read_libsvm(path)
            return Data(X, Y, default_feature_names(X.shape[1]), True)
        if fmt == "npz":
            return _npz(path, targets)
        if fmt == "arff":
            from .xmc.io import read_arff
            arff = read_arff(path)  # CSR when the file's rows are sparse
            return _split_targets(arff.X, arff.names, targets, path)
    except ValueError as exc:  # the readers name the file and the line
        raise _fail(str(exc)) from None
    from .data.tables import categorical_columns, numeric_columns, read_table
    try:
        table = read_table(path, fmt)
        if categorical_columns(table):  # a Parquet file's dictionary columns: categorical features
            return _split_frame(table, targets, path)
        return _split_targets(numeric_columns(table, path), table.column_names, targets, path)
    except (ValueError, ImportError) as exc:  # the reader names the file and the line
        raise _fail(str(exc)) from None


def _split_frame(table, targets: int, path: str) -> Data:
    """A table with categorical (dictionary) columns: the features as a pandas DataFrame (its category
    columns are the categorical features), the last ``targets`` columns as numbers."""
    from .data.tables import numeric_columns
    names = table.column_names
    if targets and not 0 < targets < len(names):
        raise _fail(f"--targets must be between 1 and {len(names) - 1} for {path}, got {targets}")
    features = table.select(names[:len(names) - targets])
    Y = numeric_columns(table.select(names[len(names) - targets:]), path) if targets else None
    return Data(features.to_pandas(), Y, list(features.column_names), False)


def _params(items: list[str] | None, config: str | None) -> dict:
    """Parameters from a TOML file, overridden by ``--param key=value`` entries (values parsed as JSON,
    else taken as strings)."""
    out = {}
    if config:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        try:
            with open(config, "rb") as fh:
                out.update(tomllib.load(fh))
        except FileNotFoundError:
            raise _fail(f"config file {config!r} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise _fail(f"{config}: not valid TOML ({exc})") from None
    for it in items or []:
        if "=" not in it:
            raise _fail(f"--param takes key=value, got {it!r}")
        k, v = it.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _labels(data: Data, path: str):
    if data.Y is None:
        raise _fail(f"{path} holds no targets: pass --targets (the number of target columns)")
    if data.label_sets:
        return np.asarray(data.Y.toarray(), dtype=np.float64)  # label sets: a 0/1 indicator matrix
    return data.Y[:, 0] if data.Y.shape[1] == 1 else data.Y


def cmd_train(args) -> int:
    import multigrove as mg
    data = read_data(args.data, args.targets, args.format)
    params = _params(args.param, args.config)
    rounds = args.rounds if args.rounds is not None else params.pop("num_boost_round", 100)
    params.pop("num_boost_round", None)
    if args.objective is not None:
        params["objective"] = args.objective
    params.setdefault("objective", "multilabel" if data.label_sets else "regression")
    ds = mg.Dataset(data.X, _labels(data, args.data), feature_names=data.names)
    valid, cbs = [], [mg.log_evaluation(args.log_every)] if args.log_every else []
    if args.valid:
        vdata = read_data(args.valid, args.targets, args.format)
        n_out = ds.label.shape[1] if ds.label.ndim == 2 else 1
        valid = [mg.Dataset(_widen(vdata.X, data.X.shape[1]), _widen(_labels(vdata, args.valid), n_out), reference=ds)]
        if args.early_stopping:
            cbs.append(mg.early_stopping(args.early_stopping))
    t0 = time.perf_counter()
    bst = mg.train(params, ds, rounds, valid_sets=valid, callbacks=cbs, init_model=args.init_model)
    bst.save_model(args.model)
    print(f"trained {bst.num_trees()} trees in {time.perf_counter() - t0:.2f} s; model written to {args.model}")
    return 0


def _widen(matrix, width: int):
    """A label-set file's matrix padded to the training file's number of columns (a test file may
    never mention the last features or labels)."""
    if matrix.ndim == 2 and matrix.shape[1] < width:
        if sp.issparse(matrix):
            return sp.csr_matrix((matrix.data, matrix.indices, matrix.indptr), shape=(matrix.shape[0], width))
        return np.hstack([matrix, np.zeros((matrix.shape[0], width - matrix.shape[1]))])
    return matrix


def _model_input(bst, data: Data, path: str):
    """The data file's features as the model reads them: a sparse file's columns widened to the model's, a
    table's columns checked by name against the model's features (a file in another column order is refused).
    A table with more columns than the model, all of the model's named among them (a test file that still
    holds its targets), gives the model's columns, and the others are named as left out."""
    if not data.label_sets:
        names, wanted = list(data.names), list(bst.feature_names)
        if len(names) > len(wanted) and wanted != default_feature_names(len(wanted)) and set(wanted) <= set(names):
            left_out = [n for n in names if n not in wanted]
            print(f"{path}: using the model's {len(wanted)} feature columns; left out {left_out[:10]}"
                  f"{' ...' if len(left_out) > 10 else ''}", file=sys.stderr)
            if hasattr(data.X, "iloc"):
                return data.X[wanted]
            return data.X[:, [names.index(n) for n in wanted]]
        check_feature_names(data.names, bst.feature_names, path, "the model")
    return _widen(data.X, bst.n_features)


def cmd_predict(args) -> int:
    import multigrove as mg
    bst = mg.Booster(model_file=args.model)
    data = read_data(args.data, args.targets, args.format)
    X = _model_input(bst, data, args.data)
    P = bst.predict(X, raw_score=args.raw_score, pred_contrib=args.contributions)
    P = P.reshape(X.shape[0], -1)
    np.savetxt(args.out, P, delimiter=",", fmt="%.9g")
    print(f"wrote {P.shape[0]} x {P.shape[1]} {'contributions' if args.contributions else 'predictions'} to {args.out}")
    return 0


def cmd_evaluate(args) -> int:
    import multigrove as mg

    from .boosting.losses import make_loss
    from .boosting.metrics import evaluate
    from .params import objective_default_metric
    bst = mg.Booster(model_file=args.model)
    data = read_data(args.data, args.targets, args.format)
    X = _model_input(bst, data, args.data)
    Y = _labels(data, args.data)
    if data.label_sets:
        Y = _widen(Y, bst.n_outputs)
    _, y = make_loss(bst.objective, bst.num_class, bst.n_outputs, Y, None)
    raw = bst.predict(X, raw_score=True).reshape(X.shape[0], -1)
    prob = bst.predict(X).reshape(X.shape[0], -1)
    metrics = args.metric or list(objective_default_metric(bst.objective))
    for m in metrics:
        for name, value, _ in evaluate(m, y, raw, prob, None, (1, 3, 5)):
            print(f"{name}\t{value:.6g}")
    return 0


def cmd_xmc_train(args) -> int:
    from .xmc import LabelTreeClassifier
    data = read_data(args.data, 0, args.format)
    if not data.label_sets:
        raise _fail(f"{args.data}: label trees train on a multi-label file (LIBSVM, XMC or an xmc .npz)")
    params = _params(args.param, args.config)
    try:
        model = LabelTreeClassifier(**params)
    except TypeError as exc:
        raise ValueError(f"LabelTreeClassifier: {exc}") from None
    t0 = time.perf_counter()
    model.fit(data.X, data.Y)
    model.save(args.model)
    print(f"trained {len(model.trees_)} label trees over {model.n_labels_:,} labels in "
          f"{time.perf_counter() - t0:.2f} s; model written to {args.model}")
    return 0


def cmd_xmc_predict(args) -> int:
    from .xmc import LabelTreeClassifier
    from .xmc.io import _atomic_text  # noqa: PLC2701 - the package's own atomic text writer
    from .xmc.metrics import evaluate
    model = LabelTreeClassifier.load(args.model)
    data = read_data(args.data, 0, args.format)
    if not data.label_sets:
        raise _fail(f"{args.data}: expected a multi-label file (LIBSVM, XMC or an xmc .npz)")
    X = _widen(data.X, model.n_features_in_)
    indices, scores = model.predict(X, top_k=args.top_k)
    if args.out:
        with _atomic_text(args.out) as fh:
            for idx, val in zip(indices, scores):
                fh.write(" ".join(f"{i}:{v:.6g}" for i, v in zip(idx, val) if i >= 0) + "\n")
        print(f"wrote the top {args.top_k} labels of {X.shape[0]} rows to {args.out}")
    if data.Y.nnz:
        Y = _widen(data.Y, model.n_labels_)
        for name, value in evaluate(Y, (indices, scores), k=min(args.top_k, 5)).items():
            print(f"{name}\t{value:.6g}")
    return 0


def cmd_demo(args) -> int:
    """Train on data that ships with scikit-learn (digits) and on generated multi-target data."""
    import tempfile

    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    import multigrove as mg

    from .datasets import make_multioutput_regression

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    X2, Y2 = make_multioutput_regression(20_000, 20, 8, seed=0)
    digits_params = {"objective": "multiclass", "metric": ["multi_logloss", "multi_error"], "learning_rate": 0.2,
                     "min_data_in_leaf": 5, "verbosity": -1}
    strategies = ("multi_output", "one_vs_all")
    # two rounds of each fit first, so that the timings below hold no compilation (Numba compiles a kernel on
    # its first call and caches it: only the first run of the demo on a machine waits for it)
    t0 = time.perf_counter()
    mg.train(digits_params, mg.Dataset(Xtr, ytr), 2)
    for strategy in strategies:
        mg.GroveRegressor(n_estimators=2, early_stopping=False, multi_strategy=strategy).fit(X2[:15000], Y2[:15000])
    print(f"kernels compiled or read from the cache: {time.perf_counter() - t0:.1f} s (not in the timings below)")

    ds = mg.Dataset(Xtr, ytr)
    va = mg.Dataset(Xte, yte, reference=ds)
    print("digits (1,797 images, 64 pixels, 10 classes): one 10-output tree per round")
    t0 = time.perf_counter()
    bst = mg.train(digits_params, ds, 300, valid_sets=[va],
                   callbacks=[mg.early_stopping(20, verbose=False), mg.log_evaluation(50)])
    acc = float((bst.predict(Xte).argmax(1) == yte).mean())
    print(f"  best iteration {bst.best_iteration}, test accuracy {acc:.4f}, {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "digits.json"
        bst.save_model(path)
        same = np.array_equal(mg.Booster(model_file=path).predict(Xte), bst.predict(Xte))
        print(f"  saved {path.stat().st_size / 1e3:.0f} kB model, reloaded: predictions identical = {same}")

    print("generated multi-target regression (20,000 x 20, 8 correlated targets), 200 rounds:")
    for strategy in strategies:
        t0 = time.perf_counter()
        reg = mg.GroveRegressor(n_estimators=200, early_stopping=False, multi_strategy=strategy)
        reg.fit(X2[:15000], Y2[:15000])
        print(f"  {strategy:12s}: {reg.booster_.num_trees():5d} trees, test R2 "
              f"{reg.score(X2[15000:], Y2[15000:]):.4f}, {time.perf_counter() - t0:.1f} s")
    return 0 if acc > 0.9 and same else 1


def cmd_compile(args) -> int:
    """Compile every kernel into Numba's cache (multigrove.warmup)."""
    from .warmup import compile_kernels
    compile_kernels(args.processes)
    return 0


def _data_options(parser, targets_default: int, targets_help: str, *, data_help: str) -> None:
    parser.add_argument("--data", required=True, help=data_help)
    parser.add_argument("--format", choices=FORMATS, help="the data files' format (default: from the suffix)")
    parser.add_argument("--targets", type=int, default=targets_default, help=targets_help)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="multigrove", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    train_cmd = commands.add_parser("train", help="train a boosted model on a data file and save it")
    _data_options(train_cmd, 1, "number of target columns of a table (its last ones); ignored for label-set files",
                  data_help="training data file")
    train_cmd.add_argument("--valid", help="validation data file (evaluated every round; early stopping watches it)")
    train_cmd.add_argument("--objective", help="regression, binary, multiclass or multilabel (default: multilabel for "
                   "label-set files, else regression, or the config file's)")
    train_cmd.add_argument("--rounds", type=int,
                           help="boosting rounds (default: num_boost_round of the config, else 100)")
    train_cmd.add_argument("--early-stopping", type=int, default=0, metavar="N",
                   help="stop when the validation metric has not improved for N rounds (needs --valid)")
    train_cmd.add_argument("--log-every", type=int, default=0, metavar="N", help="print the evaluation every N rounds")
    train_cmd.add_argument("--config", help="TOML file of training parameters (the names train() takes)")
    train_cmd.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a training parameter (repeatable; overrides the config file)")
    train_cmd.add_argument("--init-model", help="continue training this saved model")
    train_cmd.add_argument("--model", required=True, help="output model file (.json, written atomically)")
    predict_cmd = commands.add_parser("predict", help="predict with a saved boosted model")
    predict_cmd.add_argument("--model", required=True, help="model file written by 'multigrove train'")
    _data_options(predict_cmd, 0, "target columns to drop from the end of a table (default 0)", data_help="data file")
    predict_cmd.add_argument("--raw-score", action="store_true", help="write raw scores instead of probabilities")
    predict_cmd.add_argument("--contributions", action="store_true",
                   help="write SHAP values: per row, (n_features + 1) x n_outputs values, output fastest")
    predict_cmd.add_argument("--out", required=True, help="output CSV file, one row per data row")
    evaluate_cmd = commands.add_parser("evaluate", help="evaluate a saved boosted model on labelled data")
    evaluate_cmd.add_argument("--model", required=True, help="model file written by 'multigrove train'")
    _data_options(evaluate_cmd, 1, "number of target columns of a table (its last ones)",
                  data_help="labelled data file")
    evaluate_cmd.add_argument("--metric", action="append", help="a metric (repeatable; default: the objective's)")
    xmc_cmd = commands.add_parser("xmc", help="label trees for extreme multi-label classification")
    xmc_commands = xmc_cmd.add_subparsers(dest="xmc_command", required=True)
    xmc_train = xmc_commands.add_parser("train", help="train a label-tree ensemble on a multi-label file and save it")
    xmc_train.add_argument("--data", required=True, help="LIBSVM, XMC or xmc .npz training file")
    xmc_train.add_argument("--format", choices=FORMATS, help="the data file's format (default: from the suffix)")
    xmc_train.add_argument("--config", help="TOML file of LabelTreeClassifier parameters")
    xmc_train.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="a LabelTreeClassifier parameter (repeatable; overrides the config file)")
    xmc_train.add_argument("--model", required=True, help="output model file (.npz, written atomically)")
    xmc_predict = xmc_commands.add_parser("predict", help="top-k labels of each row with a saved label-tree model")
    xmc_predict.add_argument("--model", required=True, help="model file written by 'multigrove xmc train'")
    xmc_predict.add_argument("--data", required=True, help="LIBSVM, XMC or xmc .npz file (its labels, if any, are "
                    "used to print P@k, nDCG@k, recall@k, coverage@k)")
    xmc_predict.add_argument("--format", choices=FORMATS, help="the data file's format (default: from the suffix)")
    xmc_predict.add_argument("--top-k", type=int, default=5, help="labels kept per row (default 5)")
    xmc_predict.add_argument("--out", help="output file: per row 'label:score' pairs, best first")
    commands.add_parser("demo", help="train on bundled / generated data")
    compile_cmd = commands.add_parser("compile", help="compile every kernel into Numba's cache (for a Dockerfile or a "
                                      "CI step: later first fits then start at once)")
    compile_cmd.add_argument("--processes", type=int, help="processes compiling side by side (default: the cores)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = {"train": cmd_train, "predict": cmd_predict, "evaluate": cmd_evaluate, "demo": cmd_demo,
                "compile": cmd_compile,
                "xmc": lambda args: {"train": cmd_xmc_train, "predict": cmd_xmc_predict}[args.xmc_command](args)}
    try:
        return commands[args.command](args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
