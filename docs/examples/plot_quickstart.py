"""
Multi-class classification with early stopping
==============================================

One tree per round predicts all four classes.  A validation set stops training once its log loss
has not improved for 30 rounds, and the learning curves show where.
"""
import matplotlib.pyplot as plt

import multigrove as mg
from multigrove.datasets import make_multiclass
from multigrove.plotting import plot_metric

X, y = make_multiclass(4000, 10, 4, seed=0)
train = mg.Dataset(X[:3000], y[:3000])
valid = mg.Dataset(X[3000:], y[3000:], reference=train)
booster = mg.train({"objective": "multiclass", "metric": ["multi_logloss", "multi_error"]}, train,
                   num_boost_round=500, valid_sets=[train, valid], valid_names=["train", "valid"],
                   callbacks=[mg.early_stopping(30, verbose=False)])
accuracy = (booster.predict(X[3000:]).argmax(axis=1) == y[3000:]).mean()
print(f"best round {booster.best_iteration}, test accuracy {accuracy:.3f}")

fig, ax = plt.subplots(figsize=(6, 4))
plot_metric(booster, metric="multi_logloss", ax=ax)
ax.axvline(booster.best_iteration, color="grey", linestyle=":")
plt.show()
