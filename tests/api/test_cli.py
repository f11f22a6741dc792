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
