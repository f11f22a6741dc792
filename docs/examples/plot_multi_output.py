"""
One tree for many targets, and split scoring on a sketch
========================================================

Eight correlated regression targets: one tree a round for all of them (the default, whose splits
are scored on a random projection of the gradients to three columns), against one tree per target
a round (``one_vs_all``), at the same number of rounds.
"""
import time

import matplotlib.pyplot as plt

import multigrove as mg
from multigrove.datasets import make_multioutput_regression

X, Y = make_multioutput_regression(6000, 20, 8, seed=0)
fits = {}
for label, params in [("one tree, sketch", {}),
                      ("one tree, every output", {"sketch": "none"}),
                      ("a tree per target", {"multi_strategy": "one_vs_all"})]:
    started = time.perf_counter()
    model = mg.GroveRegressor(n_estimators=150, **params).fit(X[:4500], Y[:4500])
    fits[label] = (time.perf_counter() - started, model.score(X[4500:], Y[4500:]), model.booster_.num_trees())
    print(f"{label:24s} {fits[label][2]:5d} trees  R2 {fits[label][1]:.3f}  {fits[label][0]:.2f} s")

fig, ax = plt.subplots(figsize=(6, 3))
ax.barh(list(fits), [r2 for _, r2, _ in fits.values()], color="#4a6fa5")
ax.set_xlabel("test R2 (mean over 8 targets)")
ax.set_xlim(min(r2 for _, r2, _ in fits.values()) - 0.02, 1.0)
plt.tight_layout()
plt.show()
