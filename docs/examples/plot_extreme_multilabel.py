"""
Extreme multi-label: label trees and sparse-output boosting
===========================================================

A synthetic problem of 2,000 sparse labels.  Bonsai's label trees
(:class:`multigrove.xmc.LabelTreeClassifier`) and boosted trees whose labels, scores and gradients
stay sparse (``objective="sparse_hinge"``) are compared by precision at 1..5.
"""
import matplotlib.pyplot as plt

import multigrove as mg
from multigrove.datasets import make_extreme_multilabel
from multigrove.plotting import plot_precision_at_k
from multigrove.xmc import LabelTreeClassifier

X, Y = make_extreme_multilabel(n_rows=4000, n_features=2000, n_labels=2000, n_topics=100, seed=0)
X_train, Y_train, X_test, Y_test = X[:3000], Y[:3000], X[3000:], Y[3000:]
trees = LabelTreeClassifier(branching=16, n_trees=2).fit(X_train, Y_train)
boosted = mg.GroveClassifier(objective="sparse_hinge", n_estimators=60).fit(X_train, Y_train)

fig, ax = plt.subplots(figsize=(5, 3.5))
plot_precision_at_k([trees, boosted], X_test, Y_test, k=5, labels=["label trees", "sparse_hinge boosting"], ax=ax)
plt.show()
