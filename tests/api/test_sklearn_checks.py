"""scikit-learn's estimator checks on both estimators (DESIGN.md test ladder, rung 6)."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from multigrove import GroveClassifier, GroveRegressor

#: min_data_in_leaf counts rows, not weights (as LightGBM's): a row of weight 2 is one row, its
#: repetition two, so the smallest leaf allowed differs between the two fits the checks compare (with
#: min_data_in_leaf=1 and lambda_l2 > 0 they agree: tests/api/test_train.py)
WEIGHTS_ARE_NOT_ROWS = "min_data_in_leaf counts rows, not sample weights"


def _expected_failures(estimator):
    return {name: WEIGHTS_ARE_NOT_ROWS for name in ("check_sample_weight_equivalence_on_dense_data",
                                                    "check_sample_weight_equivalence_on_sparse_data")}


@parametrize_with_checks([GroveRegressor(n_estimators=20), GroveClassifier(n_estimators=20)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)
