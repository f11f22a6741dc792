"""
Categorical features: one against the rest, sets, target statistics
===================================================================

A DataFrame's ``category`` columns are categorical.  ``city`` has 40 categories, ``plane`` 600 -- more
than fit in the 255 bins a feature has.  By default a split sends one category against the rest; with
LightGBM's ``max_cat_to_onehot=4`` a feature of more categories splits on sets of them, and
``cat_encoding="statistics"`` replaces each categorical feature by ordered target statistics.  Which is
best depends on the data (the user guide gives the benchmarks); on this table, whose categories act
through their means, the statistics do well.  The tree drawn below splits ``city`` on a set.
"""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import multigrove as mg
from multigrove.plotting import plot_tree

rng = np.random.default_rng(0)
n = 8000
cities, planes = [f"city{i}" for i in range(40)], [f"N{i:03d}" for i in range(600)]
city_effect, plane_effect = rng.normal(size=40), rng.normal(size=600)
df = pd.DataFrame({"distance": rng.uniform(100, 2000, n),
                   "city": pd.Categorical(rng.choice(cities, n), categories=cities),
                   "plane": pd.Categorical(rng.choice(planes, n), categories=planes)})
delay = (df["distance"].to_numpy() / 1000 + 2 * city_effect[df["city"].cat.codes.to_numpy()]
         + plane_effect[df["plane"].cat.codes.to_numpy()] + 0.3 * rng.normal(size=n))
train, test = slice(0, 6000), slice(6000, None)

for name, params in (("one against the rest", {}), ("sets", {"max_cat_to_onehot": 4}),
                     ("target statistics", {"cat_encoding": "statistics"})):
    model = mg.GroveRegressor(n_estimators=200, **params).fit(df.iloc[train], delay[train])
    print(f"{name:21s} test R2 {model.score(df.iloc[test], delay[test]):.3f}")

# categories are matched by value: another order, or more categories, gives the same predictions
shuffled = df.iloc[test].assign(city=df["city"].iloc[test].cat.reorder_categories(cities[::-1]))
print("same predictions after reordering:", np.array_equal(model.predict(shuffled), model.predict(df.iloc[test])))

small = mg.train({"num_leaves": 4, "max_cat_to_onehot": 4, "verbosity": -1},
                 mg.Dataset(df[["distance", "city"]].iloc[train], delay[train]), 5)
fig, ax = plt.subplots(figsize=(9, 4))
plot_tree(small, tree_index=0, ax=ax)
plt.show()
