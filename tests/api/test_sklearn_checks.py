"""scikit-learn's estimator checks on both estimators (DESIGN.md test ladder, rung 6)."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from multigrove import GroveClassifier, GroveRegressor


@parametrize_with_checks([GroveRegressor(n_estimators=20), GroveClassifier(n_estimators=20)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
