"""Draw the README's pictures: `python docs/make_plots.py` writes docs/images/*.png.

The data are scikit-learn's synthetic multi-label generator (nothing to download): 2,000 rows,
20 features, 8 labels.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import make_multilabel_classification  # noqa: E402

import multigrove as mg  # noqa: E402
from multigrove import plotting  # noqa: E402

OUT = Path(__file__).parent / "images"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    X, Y = make_multilabel_classification(n_samples=2000, n_features=20, n_classes=8, random_state=0)
    names = [f"x{i}" for i in range(X.shape[1])]
    train = mg.Dataset(X[:1500], Y[:1500], feature_names=names)
    valid = mg.Dataset(X[1500:], Y[1500:], reference=train)
    booster = mg.train({"objective": "multilabel", "num_leaves": 8, "metric": ["multilabel_logloss"]}, train, 150,
                       valid_sets=[train, valid], valid_names=["train", "valid"])
    small = mg.train({"objective": "multilabel", "num_leaves": 8, "leaf_sparsity": 3}, mg.Dataset(X, Y), 150)
    drawings = {
        "plot_metric.png": lambda ax: plotting.plot_metric(booster, ax=ax),
        "plot_importance.png": lambda ax: plotting.plot_importance(booster, importance_type="gain",
                                                                   max_num_features=10, ax=ax),
        "plot_precision_at_k.png": lambda ax: plotting.plot_precision_at_k(
            [booster, small], X[1500:], Y[1500:], k=5, labels=["dense leaves", "3-sparse leaves"], ax=ax),
    }
    for name, draw in drawings.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        draw(ax)
        fig.tight_layout()
        fig.savefig(OUT / name, dpi=80)
        plt.close(fig)
    ax = plotting.plot_tree(small, tree_index=0, output_names=[f"label{j}" for j in range(8)])
    ax.figure.tight_layout()
    ax.figure.savefig(OUT / "plot_tree.png", dpi=70)
    plt.close(ax.figure)
    print("wrote", ", ".join(sorted(p.name for p in OUT.glob("*.png"))))


if __name__ == "__main__":
    main()
