"""
Explaining a multi-class model with SHAP values
===============================================

Exact TreeSHAP values of a one-tree-per-round multi-class model: every row's values add up to its
raw scores, one value per feature and class.  The mean absolute values rank the features per class.
"""
import matplotlib.pyplot as plt
import numpy as np

import multigrove as mg
from multigrove.datasets import make_multiclass

X, y = make_multiclass(3000, 8, 3, seed=1)
names = [f"x{i}" for i in range(8)]
booster = mg.train({"objective": "multiclass", "num_leaves": 15, "verbosity": -1},
                   mg.Dataset(X, y, feature_names=names), 60)
phi = booster.predict(X[:500], pred_contrib=True)          # (500, 8 + 1, 3)
print("rows add up:", np.allclose(phi.sum(axis=1), booster.predict(X[:500], raw_score=True)))

mean_abs = np.abs(phi[:, :-1, :]).mean(axis=0)               # (8, 3)
fig, ax = plt.subplots(figsize=(6, 3.5))
for c in range(3):
    ax.barh(np.arange(8) + 0.27 * (c - 1), mean_abs[:, c], height=0.27, label=f"class {c}")
ax.set_yticks(np.arange(8), names)
ax.set_xlabel("mean |SHAP value|")
ax.legend()
plt.tight_layout()
plt.show()
