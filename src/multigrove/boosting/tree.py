"""A fitted tree as structure-of-arrays, its (de)serialisation and validation.

Internal nodes are numbered 0..n_internal-1 in creation order (the root is 0, a child is
always numbered after its parent); a child reference ``c >= 0`` is an internal node, ``c < 0``
is leaf ``~c``.  Leaf ``l`` adds ``leaf_value[l, j]`` to output ``output_cols[j]``: all outputs
for a multi-output tree, one column for a one-vs-all tree.  A tree with k-sparse leaves has its
own columns per leaf instead: ``leaf_cols[l, j]`` (and an empty ``output_cols``).

A split of a categorical feature (a *set split*) sends the categories of a set left and every other
row right, a missing value included: node ``n``'s set is number ``cat_index[n]`` (-1: a numeric
split), its categories ``cat_codes[cat_offsets[j]:cat_offsets[j + 1]]`` (codes of the model's
category lists, ascending) and, in the same order, their bins of the training data ``cat_bins``.
Trees without set splits have None there.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._dtypes import NODE
from ..kernels.predict import Forest, ObliviousLevels


@dataclasses.dataclass
class Tree:
    split_feature: np.ndarray      # (n_internal,) int32
    threshold: np.ndarray          # (n_internal,) float64: left when x <= threshold
    threshold_bin: np.ndarray      # (n_internal,) int32: left when bin <= threshold_bin
    default_left: np.ndarray       # (n_internal,) bool: where missing values go
    left_child: np.ndarray         # (n_internal,) int32
    right_child: np.ndarray        # (n_internal,) int32
    split_gain: np.ndarray         # (n_internal,) float64
    internal_count: np.ndarray     # (n_internal,) int64 training rows through the node
    leaf_value: np.ndarray         # (n_leaves, width) float64, learning rate included
    leaf_count: np.ndarray         # (n_leaves,) int64
    output_cols: np.ndarray        # (width,) int32, or empty when leaf_cols is set
    leaf_cols: np.ndarray | None = None  # (n_leaves, width) int32: per-leaf outputs (k-sparse leaves)
    cat_index: np.ndarray | None = None    # (n_internal,) int32: a node's set (set splits), -1 for a numeric split
    cat_offsets: np.ndarray | None = None  # (n_sets + 1,) int64
    cat_codes: np.ndarray | None = None    # (n_entries,) int64: the categories going left, ascending per set
    cat_bins: np.ndarray | None = None     # (n_entries,) int32: their bins of the training data

    #: the optional fields of the set splits (all or none are set)
    CATEGORY_FIELDS = ("cat_index", "cat_offsets", "cat_codes", "cat_bins")

    @property
    def has_set_splits(self) -> bool:
        return self.cat_index is not None and bool(np.any(self.cat_index >= 0))

    def left_categories(self, node: int) -> np.ndarray:
        """The category codes a set split sends left (int64, ascending); empty for a numeric split."""
        if self.cat_index is None or self.cat_index[node] < 0:
            return np.zeros(0, np.int64)
        j = int(self.cat_index[node])
        return self.cat_codes[self.cat_offsets[j]: self.cat_offsets[j + 1]]

    def columns(self) -> np.ndarray:
        """(n_leaves, width) int32: the output each leaf value goes to."""
        if self.leaf_cols is not None:
            return self.leaf_cols
        return np.broadcast_to(self.output_cols, self.leaf_value.shape).astype(np.int32)

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_value.shape[0])

    @property
    def n_internal(self) -> int:
        return int(self.split_feature.shape[0])

    def depth(self) -> int:
        if self.n_internal == 0:
            return 0
        depth = np.zeros(self.n_internal, dtype=np.int64)
        best = 1
        for node in range(self.n_internal):
            for c in (self.left_child[node], self.right_child[node]):
                if c >= 0:
                    depth[c] = depth[node] + 1
                else:
                    best = max(best, depth[node] + 1)
        return int(best)

    def oblivious_levels(self) -> tuple | None:
        """The tree as a symmetric (oblivious) tree, or None when it is not one: every node of a
        level splits on the same (feature, threshold, missing direction) and every leaf is at the
        same depth D.  Returns (features (D,), thresholds (D,), default_left (D,), leaf_of_index
        (2^D,)): a row whose comparison at level l sends it right sets bit l of an index, and
        ``leaf_of_index[index]`` is its leaf."""
        if self.n_internal == 0:
            return np.zeros(0, np.int32), np.zeros(0), np.zeros(0, np.bool_), np.zeros(1, np.int32)
        if self.has_set_splits:  # levels compare thresholds only
            return None
        level, splits = [0], []
        while True:
            key = {(int(self.split_feature[n]), float(self.threshold[n]), bool(self.default_left[n])) for n in level}
            if len(key) != 1:
                return None
            splits.append(key.pop())
            children = [int(c) for n in level for c in (self.left_child[n], self.right_child[n])]
            if all(c < 0 for c in children):
                break
            if any(c < 0 for c in children):
                return None
            level = children
        depth = len(splits)
        # children are listed level by level, left before right: entry i of the last level's list
        # has the path bits of i read from the most significant (the root's) down
        leaves = np.array([~c for c in children], np.int32)
        bits = np.arange(2 ** depth)
        path = np.zeros_like(bits)
        for level_index in range(depth):  # reverse the bit order: the root's decision is bit 0
            path |= ((bits >> level_index) & 1) << (depth - 1 - level_index)
        leaf_of_index = np.empty(2 ** depth, np.int32)
        leaf_of_index[path] = leaves
        features, thresholds, default_left = zip(*splits)
        return (np.array(features, np.int32), np.array(thresholds, np.float64), np.array(default_left, np.bool_),
                leaf_of_index)

    def child_cover(self, child: int) -> float:
        """Training rows that reached a child reference (an internal node, or leaf ~child)."""
        return float(self.internal_count[child] if child >= 0 else self.leaf_count[~child])

    def left_fraction(self) -> np.ndarray:
        """(n_internal,) share of each node's training rows that went left (0.5 where none did)."""
        out = np.full(self.n_internal, 0.5)
        for node in range(self.n_internal):
            left, right = self.child_cover(self.left_child[node]), self.child_cover(self.right_child[node])
            if left + right > 0:
                out[node] = left / (left + right)
        return out

    def expected_value(self, n_outputs: int) -> np.ndarray:
        """(n_outputs,) the tree's output averaged over its training rows, as the covers route them
        (the base value of its SHAP values)."""
        reach = np.zeros(self.n_leaves)
        if self.n_internal == 0:
            reach[0] = 1.0
        else:
            node_reach = np.zeros(self.n_internal)
            node_reach[0] = 1.0
            frac = self.left_fraction()
            for node in range(self.n_internal):  # children are numbered after their parent
                for child, share in ((self.left_child[node], frac[node]), (self.right_child[node], 1 - frac[node])):
                    if child >= 0:
                        node_reach[child] = node_reach[node] * share
                    else:
                        reach[~child] = node_reach[node] * share
        out = np.zeros(n_outputs)
        np.add.at(out, self.columns(), reach[:, None] * self.leaf_value)
        return out

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        return {
            "split_feature": self.split_feature.tolist(),
            "threshold": self.threshold.tolist(),
            "threshold_bin": self.threshold_bin.tolist(),
            "default_left": self.default_left.astype(int).tolist(),
            "left_child": self.left_child.tolist(),
            "right_child": self.right_child.tolist(),
            "split_gain": self.split_gain.tolist(),
            "internal_count": self.internal_count.tolist(),
            "leaf_value": self.leaf_value.tolist(),
            "leaf_count": self.leaf_count.tolist(),
            "output_cols": self.output_cols.tolist(),
            "leaf_cols": None if self.leaf_cols is None else self.leaf_cols.tolist(),
            **({name: getattr(self, name).tolist() for name in self.CATEGORY_FIELDS} if self.has_set_splits else {}),
        }

    @classmethod
    def from_dict(cls, d: dict, n_features: int, n_outputs: int, where: str = "tree") -> "Tree":
        fields = {f.name for f in dataclasses.fields(cls)} - {"leaf_cols", *cls.CATEGORY_FIELDS}  # optional ones
        missing = fields - set(d)
        if missing:
            raise ValueError(f"{where}: missing field(s) {sorted(missing)}")
        try:
            tree = cls(
                split_feature=np.asarray(d["split_feature"], dtype=NODE).reshape(-1),
                threshold=np.asarray(d["threshold"], dtype=np.float64).reshape(-1),
                threshold_bin=np.asarray(d["threshold_bin"], dtype=NODE).reshape(-1),
                default_left=np.asarray(d["default_left"], dtype=bool).reshape(-1),
                left_child=np.asarray(d["left_child"], dtype=NODE).reshape(-1),
                right_child=np.asarray(d["right_child"], dtype=NODE).reshape(-1),
                split_gain=np.asarray(d["split_gain"], dtype=np.float64).reshape(-1),
                internal_count=np.asarray(d["internal_count"], dtype=np.int64).reshape(-1),
                leaf_value=np.asarray(d["leaf_value"], dtype=np.float64),
                leaf_count=np.asarray(d["leaf_count"], dtype=np.int64).reshape(-1),
                output_cols=np.asarray(d["output_cols"], dtype=NODE).reshape(-1),
                leaf_cols=None if d.get("leaf_cols") is None else np.asarray(d["leaf_cols"], dtype=NODE),
                **_category_fields(d, where),
            )
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"{where}: a field does not hold numbers of the expected shape ({exc})") from None
        tree.validate(n_features, n_outputs, where)
        return tree

    def validate(self, n_features: int, n_outputs: int, where: str = "tree") -> None:
        """Raise ValueError unless this is a well-formed tree over n_features / n_outputs."""
        m = self.n_internal
        for name in ("threshold", "threshold_bin", "default_left", "left_child", "right_child",
                     "split_gain", "internal_count"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"{where}: '{name}' has {getattr(self, name).size} entries, expected {m}")
        if self.leaf_value.ndim != 2 or self.leaf_value.shape[0] != m + 1:
            raise ValueError(f"{where}: 'leaf_value' must be ({m + 1}, width), got shape {self.leaf_value.shape}")
        if self.leaf_count.shape != (m + 1,):
            raise ValueError(f"{where}: 'leaf_count' has {self.leaf_count.size} entries, expected {m + 1}")
        width = self.leaf_value.shape[1]
        if width == 0:
            raise ValueError(f"{where}: leaves must hold at least one value")
        if self.leaf_cols is None:
            if self.output_cols.shape != (width,):
                raise ValueError(f"{where}: 'output_cols' must have {width} entries, got {self.output_cols.size}")
            if np.any(self.output_cols < 0) or np.any(self.output_cols >= n_outputs) or \
                    np.unique(self.output_cols).size != width:
                raise ValueError(f"{where}: 'output_cols' must be distinct outputs in [0, {n_outputs})")
        else:
            if self.leaf_cols.shape != self.leaf_value.shape or self.output_cols.size:
                raise ValueError(f"{where}: 'leaf_cols' must have the shape of 'leaf_value' {self.leaf_value.shape} "
                                 "and 'output_cols' must be empty")
            lc = np.sort(self.leaf_cols, axis=1)
            if np.any(lc < 0) or np.any(lc >= n_outputs) or np.any(lc[:, 1:] == lc[:, :-1]):
                raise ValueError(f"{where}: 'leaf_cols' must hold distinct outputs in [0, {n_outputs}) per leaf")
        if not np.all(np.isfinite(self.leaf_value)):
            raise ValueError(f"{where}: 'leaf_value' holds non-finite numbers")
        if m == 0:
            return
        if np.any(self.split_feature < 0) or np.any(self.split_feature >= n_features):
            raise ValueError(f"{where}: 'split_feature' must be in [0, {n_features})")
        if np.any(np.isnan(self.threshold)):
            raise ValueError(f"{where}: 'threshold' holds NaN")
        self._validate_sets(where)
        seen_nodes = np.zeros(m, dtype=np.int64)
        seen_leaves = np.zeros(m + 1, dtype=np.int64)
        for node in range(m):
            for c in (int(self.left_child[node]), int(self.right_child[node])):
                if c >= 0:
                    if c <= node or c >= m:
                        raise ValueError(f"{where}: node {node} has child {c}; internal children must be "
                                         f"numbered after their parent and below {m}")
                    seen_nodes[c] += 1
                else:
                    leaf = ~c
                    if leaf > m:
                        raise ValueError(f"{where}: node {node} points to leaf {leaf}, but there are {m + 1} leaves")
                    seen_leaves[leaf] += 1
        if np.any(seen_nodes[1:] != 1) or seen_nodes[0] != 0 or np.any(seen_leaves != 1):
            raise ValueError(f"{where}: every node and leaf must have exactly one parent")


    def _validate_sets(self, where: str) -> None:
        """The set splits' arrays agree with each other and with the nodes."""
        if self.cat_index is None:
            return
        m = self.n_internal
        offsets, codes, bins = self.cat_offsets, self.cat_codes, self.cat_bins
        n_sets = offsets.size - 1
        if self.cat_index.shape != (m,) or n_sets < 0 or offsets[0] != 0 or np.any(np.diff(offsets) < 1) \
                or offsets[-1] != codes.size or bins.shape != codes.shape:
            raise ValueError(f"{where}: the set splits' arrays (cat_index, cat_offsets, cat_codes, cat_bins) do not "
                             "agree in size")
        used = self.cat_index[self.cat_index >= 0]
        if np.any(self.cat_index < -1) or np.any(self.cat_index >= n_sets) or np.unique(used).size != used.size \
                or used.size != n_sets:
            raise ValueError(f"{where}: 'cat_index' must number each set once, -1 for a numeric split")
        if np.any(codes < 0) or np.any(bins < 0):
            raise ValueError(f"{where}: 'cat_codes' and 'cat_bins' must be >= 0")
        for j in range(n_sets):
            if np.any(np.diff(codes[offsets[j]: offsets[j + 1]]) <= 0):
                raise ValueError(f"{where}: set {j}'s categories must be distinct and ascending")


def _category_fields(d: dict, where: str) -> dict:
    """A tree file's set-split fields as arrays (none, or all four)."""
    present = [name for name in Tree.CATEGORY_FIELDS if d.get(name) is not None]
    if not present:
        return {}
    if len(present) != len(Tree.CATEGORY_FIELDS):
        raise ValueError(f"{where}: set splits need all of {list(Tree.CATEGORY_FIELDS)}, got only {present}")
    dtypes = {"cat_index": NODE, "cat_offsets": np.int64, "cat_codes": np.int64, "cat_bins": np.int32}
    return {name: np.asarray(d[name], dtype=dtypes[name]).reshape(-1) for name in Tree.CATEGORY_FIELDS}


def set_split_fields(left_bins: list, split_feature: np.ndarray, mapper) -> dict:
    """The set-split fields of a grown tree (``left_bins``: per node, the bins a set split sends left, or None),
    its bins turned into the codes of ``mapper``'s category lists; {} without set splits."""
    if all(bins is None for bins in left_bins):
        return {}
    index = np.full(len(left_bins), -1, NODE)
    offsets, codes, bins_out = [0], [], []
    for node, bins in enumerate(left_bins):
        if bins is None:
            continue
        index[node] = len(offsets) - 1
        kept = np.flatnonzero(bins[: mapper.n_value_bins[split_feature[node]]])
        node_codes = mapper.category_codes(int(split_feature[node]))[kept]
        order = np.argsort(node_codes)
        codes.append(node_codes[order])
        bins_out.append(kept[order].astype(np.int32))
        offsets.append(offsets[-1] + kept.size)
    return {"cat_index": index, "cat_offsets": np.array(offsets, np.int64), "cat_codes": np.concatenate(codes),
            "cat_bins": np.concatenate(bins_out)}


def prediction_work(forest: Forest, n_rows: int) -> float:
    """The work of predicting n_rows with the forest, in kernels._variants.pick's units: a walk down each
    tree and the values of the leaf it reaches (983 of them a leaf for Delicious's dense leaves, where a
    count of rows x trees alone ran a 1,920-row validation set's scores on one thread)."""
    n_trees = forest.tree_node_offset.shape[0] - 1
    leaf_width = forest.leaf_vals.shape[0] / max(forest.leaf_ptr.shape[0] - 1, 1)
    return n_rows * n_trees * (1.0 + leaf_width)


def stack_trees(trees: list[Tree]) -> Forest:
    """Flatten trees into the Forest the predict kernels take (see kernels/predict.py)."""
    n_int = [t.n_internal for t in trees]
    n_leaf = [t.n_leaves for t in trees]
    node_off = np.concatenate([[0], np.cumsum(n_int)]).astype(np.int64)
    leaf_off = np.concatenate([[0], np.cumsum(n_leaf)]).astype(np.int64)
    widths = np.repeat([t.leaf_value.shape[1] for t in trees], n_leaf) if trees else np.zeros(0, int)
    leaf_ptr = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)

    def cat(name, dtype):
        return (np.concatenate([getattr(t, name) for t in trees]).astype(dtype)
                if trees else np.zeros(0, dtype))
    return Forest(
        node_feature=cat("split_feature", np.int32),
        node_threshold=cat("threshold", np.float64),
        node_bin=cat("threshold_bin", np.int32),
        node_default_left=cat("default_left", np.bool_),
        node_left=cat("left_child", np.int32),
        node_right=cat("right_child", np.int32),
        tree_node_offset=node_off,
        tree_leaf_offset=leaf_off,
        leaf_ptr=leaf_ptr,
        leaf_cols=(np.concatenate([t.columns().reshape(-1) for t in trees]).astype(np.int32)
                   if trees else np.zeros(0, np.int32)),
        leaf_vals=(np.concatenate([t.leaf_value.reshape(-1) for t in trees])
                   if trees else np.zeros(0, np.float64)),
        **_stacked_sets(trees, n_int),
    )


def _stacked_sets(trees: list[Tree], n_internal: list[int]) -> dict:
    """The Forest's set-split arrays: every tree's sets numbered one after the other."""
    node_cat, offsets, codes, bins = [], [np.zeros(1, np.int64)], [], []
    n_sets, n_entries = 0, 0
    for tree, m in zip(trees, n_internal):
        if not tree.has_set_splits:
            node_cat.append(np.full(m, -1, np.int32))
            continue
        node_cat.append(np.where(tree.cat_index >= 0, tree.cat_index + n_sets, -1).astype(np.int32))
        offsets.append(tree.cat_offsets[1:] + n_entries)
        codes.append(tree.cat_codes.astype(np.float64))
        bins.append(tree.cat_bins.astype(np.int32))
        n_sets += tree.cat_offsets.size - 1
        n_entries += tree.cat_codes.size
    return {"node_cat": np.concatenate(node_cat) if node_cat else np.zeros(0, np.int32),
            "cat_offsets": np.concatenate(offsets),
            "cat_codes": np.concatenate(codes) if codes else np.zeros(0, np.float64),
            "cat_bins": np.concatenate(bins) if bins else np.zeros(0, np.int32)}



def stack_oblivious(trees: list[Tree]) -> ObliviousLevels | None:
    """The level arrays of a forest of symmetric trees for ``kernels.predict.predict_oblivious``,
    or None when a tree is not symmetric."""
    levels = [t.oblivious_levels() for t in trees]
    if not trees or any(lv is None for lv in levels):
        return None
    depth = np.array([lv[0].shape[0] for lv in levels], np.int64)
    max_depth = int(depth.max())
    feature = np.zeros((len(trees), max(max_depth, 1)), np.int32)
    threshold = np.zeros(feature.shape)
    default_left = np.zeros(feature.shape, np.bool_)
    for t, lv in enumerate(levels):
        feature[t, :depth[t]], threshold[t, :depth[t]], default_left[t, :depth[t]] = lv[:3]
    index_offset = np.concatenate([[0], np.cumsum([lv[3].shape[0] for lv in levels])]).astype(np.int64)
    return ObliviousLevels(level_feature=feature, level_threshold=threshold, level_default_left=default_left,
                           tree_depth=depth, index_offset=index_offset,
                           leaf_of_index=np.concatenate([lv[3] for lv in levels]).astype(np.int32))
