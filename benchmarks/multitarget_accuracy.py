#!/usr/bin/env python
"""Multi-target regression accuracy as a new user gets it: rf1 and scm20d, test RMSE.

Split 80/20 (seed 0), then 10 % of train held out for early stopping after 50 rounds (seed 0).
multigrove: GroveRegressor() at its defaults (one multi-output tree a round, standardized targets,
127 leaves, random-projection split scoring, early stopping per target), and the same with
num_leaves=31, sketch="none" (the plain GBDT-MO tree); LightGBM: one LGBMRegressor() per target at
its defaults.  RMSE in the targets' units over all targets, and in units of each target's standard
deviation (rf1's targets range from 0.9 to 62).

    python benchmarks/multitarget_accuracy.py --out benchmarks/results/multitarget_accuracy.jsonl
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402

PATIENCE = 50


def split(name):
    from sklearn.model_selection import train_test_split

    from multigrove import datasets
    X, Y = datasets.load_multi_target(name)
    Xtr, Xte, Ytr, Yte = train_test_split(X, Y, test_size=0.2, random_state=0)
    Xfit, Xva, Yfit, Yva = train_test_split(Xtr, Ytr, test_size=0.1, random_state=0)
    return Xfit, Yfit, Xva, Yva, Xte, Yte, Ytr.std(0)


def fit_mg(Xfit, Yfit, Xva, Yva, Xte, **params):
    import multigrove as mg
    reg = mg.GroveRegressor(n_estimators=5000, **params).fit(
        Xfit, Yfit, eval_set=[(Xva, Yva)], callbacks=[mg.early_stopping(PATIENCE, verbose=False)])
    return reg.predict(Xte)


def fit_lgbm(Xfit, Yfit, Xva, Yva, Xte):
    import warnings

    import lightgbm as lgb
    warnings.filterwarnings("ignore", message=".*eval_set.*deprecated")
    P = np.zeros((Xte.shape[0], Yfit.shape[1]))
    for target in range(Yfit.shape[1]):
        model = lgb.LGBMRegressor(n_estimators=5000, verbose=-1).fit(
            Xfit, Yfit[:, target], eval_set=[(Xva, Yva[:, target])],
            callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])
        P[:, target] = model.predict(Xte)
    return P


SYSTEMS = {
    "multigrove defaults": lambda *d: fit_mg(*d),
    "multigrove 31 leaves, no sketch": lambda *d: fit_mg(*d, num_leaves=31, sketch="none"),
    "LightGBM, one model per target": fit_lgbm,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="rf1,scm20d")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    for name in a.datasets.split(","):
        Xfit, Yfit, Xva, Yva, Xte, Yte, sd = split(name)
        for system, fit in SYSTEMS.items():
            t0 = time.perf_counter()
            err = fit(Xfit, Yfit, Xva, Yva, Xte) - Yte
            emit(dict(bench="multitarget_accuracy", data=name, system=system,
                      rmse=round(float(np.sqrt((err ** 2).mean())), 4),
                      rmse_sd_units=round(float(np.sqrt(((err / sd) ** 2).mean())), 4),
                      fit_s=round(time.perf_counter() - t0, 1)), a.out)


if __name__ == "__main__":
    main()
