"""Plots of a trained model: learning curves, feature importance, one tree, precision at k.

matplotlib is an optional dependency (``pip install multigrove[plot]``), imported when a plot is
drawn.  Every function draws on ``ax`` (a new figure's axes when None) and returns that Axes.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._validation import default_feature_names
from .boosting.booster import Booster
from .boosting.tree import Tree


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("multigrove.plotting needs matplotlib: pip install 'multigrove[plot]'") from None
    return plt


def _axes(ax, figsize=None):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def _booster(model: Any) -> Booster:
    """A Booster, or the Booster of a fitted multigrove estimator."""
    if isinstance(model, Booster):
        return model
    booster = getattr(model, "booster_", None)
    if isinstance(booster, Booster):
        return booster
    raise TypeError(f"expected a multigrove Booster or a fitted GroveRegressor / GroveClassifier, "
                    f"got {type(model).__name__}")


def plot_metric(model: Any, metric: str | None = None, dataset_names: Sequence[str] | None = None,
                ax=None, title: str = "Metric during training", xlabel: str = "Iterations",
                ylabel: str | None = None, figsize=None):
    """Learning curves: one line per data set for one metric.

    Parameters
    ----------
    model : dict, Booster or fitted estimator
        A ``record_evaluation`` dict ``{data_name: {metric_name: [values]}}``, a Booster (its
        ``evals_result``, recorded by ``train`` for the validation sets) or a fitted estimator
        (its ``evals_result_``).
    metric : str, optional
        The metric to draw (``"l2"``, ``"l2[3]"``, ...); the first one recorded when None.
    dataset_names : list of str, optional
        The data sets to draw; all when None.
    ax : matplotlib Axes, optional
    title, xlabel, ylabel : str
        ``ylabel`` defaults to the metric's name.
    figsize : tuple, optional
        Size of the new figure when ``ax`` is None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if isinstance(model, dict):
        history = model
    elif isinstance(model, Booster):
        history = model.evals_result
    elif hasattr(model, "evals_result_"):
        history = model.evals_result_
    else:
        raise TypeError(f"plot_metric takes a record_evaluation dict, a Booster or a fitted estimator, "
                        f"got {type(model).__name__}")
    if not history:
        raise ValueError("no evaluation was recorded: train with valid_sets (or fit with eval_set)")
    names = list(history) if dataset_names is None else list(dataset_names)
    unknown = [n for n in names if n not in history]
    if unknown:
        raise ValueError(f"dataset_names: {unknown[0]!r} was not recorded; recorded: {sorted(history)}")
    if metric is None:
        metric = next(iter(history[names[0]]))
    ax = _axes(ax, figsize)
    for name in names:
        if metric not in history[name]:
            raise ValueError(f"metric {metric!r} was not recorded for {name!r}; recorded: {sorted(history[name])}")
        values = history[name][metric]
        ax.plot(np.arange(1, len(values) + 1), values, label=name)
    ax.legend(loc="best")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(metric if ylabel is None else ylabel)
    ax.grid(True, alpha=0.3)
    return ax


def plot_importance(model: Any, importance_type: str = "split", max_num_features: int | None = 20,
                    ax=None, title: str = "Feature importance", xlabel: str | None = None,
                    ylabel: str = "Features", figsize=None):
    """Horizontal bars of the most important features (features never used are left out).

    Parameters
    ----------
    model : Booster or fitted estimator
    importance_type : {"split", "gain"}
        Number of splits on the feature, or the total gain of those splits.
    max_num_features : int or None, default 20
        Draw the top ones only; all used features when None.
    ax : matplotlib Axes, optional
    title, xlabel, ylabel : str
    figsize : tuple, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    booster = _booster(model)
    importance = booster.feature_importance(importance_type).astype(np.float64)
    order = [f for f in np.argsort(-importance, kind="stable") if importance[f] > 0]
    if max_num_features is not None:
        if isinstance(max_num_features, bool) or not isinstance(max_num_features, (int, np.integer)) \
                or max_num_features < 1:
            raise ValueError(f"max_num_features must be an integer >= 1 or None, got {max_num_features!r}")
        order = order[:max_num_features]
    if not order:
        raise ValueError("the model has no split: no feature has any importance to draw")
    order = order[::-1]  # the largest bar on top
    names = booster.feature_name() or default_feature_names(booster.n_features)
    ax = _axes(ax, figsize)
    values = importance[order]
    ax.barh(np.arange(len(order)), values, align="center", height=0.6)
    ax.set_yticks(np.arange(len(order)), [names[f] for f in order])
    for y, v in enumerate(values):
        ax.text(v, y, f" {v:.4g}" if importance_type == "gain" else f" {int(v)}", va="center")
    ax.set_title(title)
    ax.set_xlabel(f"Feature importance ({importance_type})" if xlabel is None else xlabel)
    ax.set_ylabel(ylabel)
    return ax


def _leaf_label(tree: Tree, leaf: int, show_outputs: int, output_names: Sequence[str] | None) -> str:
    values, cols = tree.leaf_value[leaf], tree.columns()[leaf]
    top = np.argsort(-np.abs(values), kind="stable")[:show_outputs]
    lines = [f"leaf {leaf}  n={int(tree.leaf_count[leaf])}"]
    for j in top:
        name = output_names[cols[j]] if output_names is not None else f"out{cols[j]}"
        lines.append(f"{name}: {values[j]:+.3g}")
    if values.size > show_outputs:
        lines.append(f"(+{values.size - show_outputs} more)")
    return "\n".join(lines)


def _tree_layout(tree: Tree) -> tuple[dict, dict]:
    """x (leaf order, parents centred over children) and depth of every node and leaf; keys are
    child references (node >= 0, leaf ~l < 0)."""
    x, depth = {}, {}
    next_leaf = [0.0]

    def place(ref: int, level: int) -> float:
        depth[ref] = level
        if ref < 0:
            x[ref] = next_leaf[0]
            next_leaf[0] += 1.0
            return x[ref]
        left = place(int(tree.left_child[ref]), level + 1)
        right = place(int(tree.right_child[ref]), level + 1)
        x[ref] = (left + right) / 2
        return x[ref]
    place(0 if tree.n_internal else -1, 0)
    return x, depth


#: categories a set split's label lists before "..."
SHOWN_CATEGORIES = 6


def _split_label(booster, tree: Tree, node: int, names: Sequence[str], precision: int) -> str:
    """'feature <= threshold', or for a set split 'feature in {categories}' (their names where the model has
    the feature's category list, else their codes)."""
    feature = int(tree.split_feature[node])
    codes = tree.left_categories(node)
    if codes.size == 0:
        return f"{names[feature]} <= {tree.threshold[node]:.{precision}g}"
    values = booster.categories.get(feature)
    shown = [str(values[c]) if values is not None else str(int(c)) for c in codes[:SHOWN_CATEGORIES]]
    more = f", ... ({codes.size} in all)" if codes.size > SHOWN_CATEGORIES else ""
    return f"{names[feature]} in {{{', '.join(shown)}{more}}}"


def plot_tree(model: Any, tree_index: int = 0, show_outputs: int = 3, output_names: Sequence[str] | None = None,
              precision: int = 3, ax=None, figsize=None):
    """Draw one tree: each split with its feature, threshold and rows; each leaf with its largest
    values (the ``show_outputs`` outputs of largest magnitude, for vector and k-sparse leaves alike).
    A set split of a categorical feature shows the categories it sends left ("in {a, b, ...}").

    Parameters
    ----------
    model : Booster or fitted estimator
    tree_index : int
        Index into the model's trees (``num_trees()`` of them; one_vs_all has one per output a round).
    show_outputs : int, default 3
        Outputs listed per leaf.
    output_names : list of str, optional
        Names of the outputs (labels, targets, classes); ``out{j}`` when None.
    precision : int, default 3
        Significant digits of thresholds.
    ax : matplotlib Axes, optional
    figsize : tuple, optional
        Size of the new figure; by default it grows with the number of leaves and the depth.

    Returns
    -------
    matplotlib.axes.Axes
        One text box per split and per leaf (``ax.texts``), one arrow per edge.
    """
    booster = _booster(model)
    if isinstance(tree_index, bool) or not isinstance(tree_index, (int, np.integer)) \
            or not 0 <= tree_index < booster.num_trees():
        raise ValueError(f"tree_index must be an integer in [0, {booster.num_trees()}), got {tree_index!r}")
    if isinstance(show_outputs, bool) or not isinstance(show_outputs, (int, np.integer)) or show_outputs < 1:
        raise ValueError(f"show_outputs must be an integer >= 1, got {show_outputs!r}")
    if output_names is not None and len(output_names) != booster.n_outputs:
        raise ValueError(f"output_names has {len(output_names)} names for {booster.n_outputs} outputs")
    tree = booster.trees[tree_index]
    x, depth = _tree_layout(tree)
    n_levels = max(depth.values()) + 1
    if figsize is None and ax is None:
        figsize = (max(6.0, 2.2 * tree.n_leaves), max(3.0, 1.8 * n_levels))
    ax = _axes(ax, figsize)
    names = booster.model_feature_names()
    box = dict(boxstyle="round,pad=0.3", fc="#e8eef7", ec="#4a6fa5")
    leaf_box = dict(boxstyle="round,pad=0.3", fc="#f3f3e6", ec="#8a8a5c")
    for ref in x:
        if ref >= 0:
            label = (f"{_split_label(booster, tree, ref, names, precision)}\n"
                     f"gain {tree.split_gain[ref]:.3g}  n={int(tree.internal_count[ref])}\n"
                     f"missing -> {'left' if tree.default_left[ref] else 'right'}")
            style = box
        else:
            label = _leaf_label(tree, ~ref, show_outputs, output_names)
            style = leaf_box
        ax.text(x[ref], -depth[ref], label, ha="center", va="center", fontsize=8, bbox=style)
    for node in range(tree.n_internal):
        for child, side in ((int(tree.left_child[node]), "yes"), (int(tree.right_child[node]), "no")):
            ax.annotate("", xy=(x[child], -depth[child] + 0.25), xytext=(x[node], -depth[node] - 0.25),
                        arrowprops=dict(arrowstyle="->", color="#555555"))
            ax.text((x[node] + x[child]) / 2, -(depth[node] + depth[child]) / 2, side, fontsize=7,
                    color="#555555", ha="center")
    ax.set_xlim(min(x.values()) - 0.8, max(x.values()) + 0.8)
    ax.set_ylim(-(n_levels - 1) - 0.6, 0.6)
    ax.set_axis_off()
    ax.set_title(f"tree {tree_index}: {tree.n_internal} splits, {tree.n_leaves} leaves, "
                 f"{tree.leaf_value.shape[1]} values per leaf")
    return ax


def plot_precision_at_k(models: Any, X, Y, k: int = 5, labels: Sequence[str] | None = None, ax=None,
                        title: str = "Precision at k", figsize=None):
    """P@1..P@k of one or several multi-label models on (X, Y): one line per model.

    Parameters
    ----------
    models : a model or a list of models
        A Booster, or anything with ``predict_top_k(X, k)`` (a fitted GroveClassifier, a
        LabelTreeClassifier) or ``predict_proba(X)``: each row's k best labels are ranked.
    X : array-like or sparse matrix
    Y : 0/1 indicator matrix (dense or sparse), shape (n, n_labels)
    k : int, default 5
    labels : list of str, optional
        Legend entries; the models' class names when None.
    ax : matplotlib Axes, optional
    title : str
    figsize : tuple, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .xmc.metrics import precision_at_k
    models = list(models) if isinstance(models, (list, tuple)) else [models]
    if labels is not None and len(labels) != len(models):
        raise ValueError(f"labels has {len(labels)} entries for {len(models)} models")
    ax = _axes(ax, figsize)
    ks = np.arange(1, k + 1)
    for i, model in enumerate(models):
        if isinstance(model, Booster):
            scores = model.predict(X, top_k=k)
        elif hasattr(model, "predict_top_k"):
            scores = model.predict_top_k(X, k)
        else:
            scores = model.predict_proba(X)
        values = precision_at_k(Y, scores, k)
        ax.plot(ks, values, marker="o", label=labels[i] if labels is not None else type(model).__name__)
    ax.set_xticks(ks)
    ax.set_xlabel("k")
    ax.set_ylabel("precision@k")
    ax.set_title(title)
    ax.legend(loc="best")
    ax.grid(True, alpha=0.3)
    return ax
