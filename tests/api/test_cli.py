"""The command line: train -> predict -> evaluate round trip, and its errors."""
import numpy as np
import pytest

from multigrove.cli import main


@pytest.fixture
def csv_files(tmp_path, rng):
    X = rng.normal(size=(400, 3))
    Y = np.column_stack([X[:, 0] * 2 + X[:, 1], X[:, 2] ** 2])
    X[::10, 1] = np.nan
    M = np.column_stack([X, Y])
    path = tmp_path / "train.csv"
    lines = ["a,b,c,y1,y2"] + [",".join("" if np.isnan(v) else repr(float(v)) for v in row) for row in M]
    path.write_text("\n".join(lines) + "\n")
    return path, X, Y


def test_train_predict_evaluate_round_trip(csv_files, tmp_path, capsys):
    path, X, Y = csv_files
    model = tmp_path / "m.json"
    assert main(["train", "--data", str(path), "--targets", "2", "--rounds", "50", "--model", str(model),
                 "--param", "num_leaves=8", "--param", "min_data_in_leaf=5"]) == 0
    out = tmp_path / "p.csv"
    assert main(["predict", "--model", str(model), "--data", str(path), "--targets", "2", "--out", str(out)]) == 0
    P = np.loadtxt(out, delimiter=",")
    assert P.shape == (400, 2)
    assert np.mean((P - Y) ** 2) < 0.2 * Y.var(axis=0).mean()
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--data", str(path), "--targets", "2", "--metric", "rmse"]) == 0
    name, value = capsys.readouterr().out.split()
    assert name == "rmse" and float(value) == pytest.approx(np.sqrt(np.mean((P - Y) ** 2)), rel=1e-6)


def test_cli_errors(csv_files, tmp_path, capsys):
    path, _, _ = csv_files
    assert main(["train", "--data", str(path), "--targets", "2", "--model", str(tmp_path / "m.json"),
                 "--param", "num_leaves=1"]) == 2
    assert "num_leaves must be >= 2, got 1" in capsys.readouterr().err
    assert main(["predict", "--model", str(tmp_path / "m.json"), "--data", str(path),
                 "--out", str(tmp_path / "o.csv")]) == 2
    assert "m.json' does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="nope.csv' does not exist"):
        main(["train", "--data", str(tmp_path / "nope.csv"), "--model", str(tmp_path / "m.json")])
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3\n")
    with pytest.raises(SystemExit, match="bad.csv, line 3: expected 2 fields, got 1"):
        main(["train", "--data", str(bad), "--model", str(tmp_path / "m.json")])


def test_a_sparse_arff_file_stays_sparse_and_trains_the_dense_model(tmp_path, rng):
    import scipy.sparse as sp

    import multigrove as mg
    from multigrove.cli import _read_table
    X = sp.random(300, 20, density=0.1, format="csr", random_state=3, data_rvs=lambda k: rng.integers(1, 5, k))
    y = np.asarray(X[:, :3].sum(axis=1)).ravel() + rng.normal(scale=0.1, size=300)
    lines = ["@relation sparse", *[f"@attribute f{j} numeric" for j in range(20)], "@attribute y numeric", "@data"]
    for i in range(300):
        row = X.getrow(i)
        lines.append("{" + ", ".join([f"{j} {v:g}" for j, v in zip(row.indices, row.data)] + [f"20 {float(y[i])!r}"]) + "}")
    path = tmp_path / "train.arff"
    path.write_text("\n".join(lines) + "\n")
    X_read, Y_read, names = _read_table(str(path), 1)
    assert sp.issparse(X_read) and X_read.shape == (300, 20) and names == [f"f{j}" for j in range(20)]
    np.testing.assert_array_equal(X_read.toarray(), X.toarray())
    model, out = tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["train", "--data", str(path), "--rounds", "20", "--model", str(model),
                 "--param", "min_data_in_leaf=5"]) == 0
    assert main(["predict", "--model", str(model), "--data", str(path), "--targets", "1", "--out", str(out)]) == 0
    dense = mg.train({"min_data_in_leaf": 5}, mg.Dataset(X.toarray(), Y_read[:, 0]), 20)
    np.testing.assert_allclose(np.loadtxt(out, delimiter=","), dense.predict(X.toarray()), rtol=1e-6, atol=1e-9)
