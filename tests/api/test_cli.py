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
    # printed to 6 significant digits
    assert name == "rmse" and float(value) == pytest.approx(np.sqrt(np.mean((P - Y) ** 2)), rel=1e-5)


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
    with pytest.raises(SystemExit, match="bad.csv, line 3: Expected 2 columns, got 1"):
        main(["train", "--data", str(bad), "--model", str(tmp_path / "m.json")])


def test_a_table_in_another_column_order_is_refused_not_read_by_position(csv_files, tmp_path, capsys):
    path, _, _ = csv_files
    model = tmp_path / "m.json"
    assert main(["train", "--data", str(path), "--targets", "2", "--rounds", "5", "--model", str(model)]) == 0
    header, *rows = path.read_text().splitlines()
    swapped = tmp_path / "swapped.csv"  # columns c, a, b, y1, y2
    swapped.write_text("\n".join(",".join(cells[i] for i in (2, 0, 1, 3, 4))
                                 for cells in (line.split(",") for line in [header, *rows])) + "\n")
    capsys.readouterr()
    for command in (["predict", "--out", str(tmp_path / "p.csv")], ["evaluate", "--metric", "rmse"]):
        assert main([command[0], "--model", str(model), "--data", str(swapped), "--targets", "2", *command[1:]]) == 2
        assert "swapped.csv's columns are the model's features in another order (column 0 is 'c', trained as 'a')" \
            in capsys.readouterr().err
    assert not (tmp_path / "p.csv").exists()


def test_a_sparse_arff_file_stays_sparse_and_trains_the_dense_model(tmp_path, rng):
    import scipy.sparse as sp

    import multigrove as mg
    from multigrove.cli import read_data
    X = sp.random(300, 20, density=0.1, format="csr", random_state=3, data_rvs=lambda k: rng.integers(1, 5, k))
    y = np.asarray(X[:, :3].sum(axis=1)).ravel() + rng.normal(scale=0.1, size=300)
    lines = ["@relation sparse", *[f"@attribute f{j} numeric" for j in range(20)], "@attribute y numeric", "@data"]
    for i in range(300):
        row = X.getrow(i)
        entries = [f"{j} {v:g}" for j, v in zip(row.indices, row.data)] + [f"20 {float(y[i])!r}"]
        lines.append("{" + ", ".join(entries) + "}")
    path = tmp_path / "train.arff"
    path.write_text("\n".join(lines) + "\n")
    X_read, Y_read, names, _ = read_data(str(path), 1)
    assert sp.issparse(X_read) and X_read.shape == (300, 20) and names == [f"f{j}" for j in range(20)]
    np.testing.assert_array_equal(X_read.toarray(), X.toarray())
    model, out = tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["train", "--data", str(path), "--rounds", "20", "--model", str(model),
                 "--param", "min_data_in_leaf=5"]) == 0
    assert main(["predict", "--model", str(model), "--data", str(path), "--targets", "1", "--out", str(out)]) == 0
    dense = mg.train({"min_data_in_leaf": 5}, mg.Dataset(X.toarray(), Y_read[:, 0]), 20)
    np.testing.assert_allclose(np.loadtxt(out, delimiter=","), dense.predict(X.toarray()), rtol=1e-6, atol=1e-9)


def _table(rng, n=300):
    X = rng.normal(size=(n, 3))
    y = X[:, 0] * 2 - X[:, 1] + 0.1 * rng.normal(size=n)
    X[::7, 2] = np.nan
    return X, y


def _write_table(path, X, y):
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}), path)
    elif path.suffix == ".npz":
        np.savez(path, X=X, y=y)
    else:
        sep = "\t" if path.suffix == ".tsv" else ","
        rows = [sep.join(["a", "b", "c", "y"])]
        rows += [sep.join("NA" if np.isnan(v) else repr(float(v)) for v in [*x, t]) for x, t in zip(X, y)]
        path.write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".npz"])
def test_table_formats_train_the_same_model(tmp_path, rng, suffix):
    import multigrove as mg
    X, y = _table(rng)
    path = tmp_path / f"train{suffix}"
    _write_table(path, X, y)
    config = tmp_path / "params.toml"
    config.write_text('num_leaves = 6\nmin_data_in_leaf = 5\nnum_boost_round = 15\nlearning_rate = 0.2\n')
    model, out = tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["train", "--data", str(path), "--config", str(config), "--param", "learning_rate=0.3",
                 "--model", str(model)]) == 0
    assert main(["predict", "--model", str(model), "--data", str(path), "--targets", "1", "--out", str(out)]) == 0
    want = mg.train({"num_leaves": 6, "min_data_in_leaf": 5, "learning_rate": 0.3}, mg.Dataset(X, y), 15)
    assert mg.Booster(model_file=model).num_trees() == 15
    np.testing.assert_allclose(np.loadtxt(out, delimiter=","), want.predict(X), rtol=1e-7, atol=1e-9)


def test_label_set_formats_and_label_trees(tmp_path, rng, capsys):
    import scipy.sparse as sp

    import multigrove as mg
    from multigrove.xmc.io import save_npz, write_libsvm, write_xmc
    X = sp.random(400, 30, density=0.2, format="csr", random_state=1, dtype=np.float64)
    dense = (X[:, :5].toarray() > 0.3).astype(np.float64)
    dense[dense.sum(axis=1) == 0, 4] = 1.0
    Y = sp.csr_matrix(dense)
    paths = {"xmc": tmp_path / "d.xmc", "libsvm": tmp_path / "d.svm", "npz": tmp_path / "d.npz"}
    write_xmc(paths["xmc"], X, Y)
    write_libsvm(paths["libsvm"], X, Y)
    save_npz(paths["npz"], X, Y)
    want = mg.train({"objective": "multilabel", "num_leaves": 6}, mg.Dataset(X, Y.toarray()), 10)
    for name, path in paths.items():
        model, out = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
        assert main(["train", "--data", str(path), "--rounds", "10", "--param", "num_leaves=6",
                     "--model", str(model)]) == 0, name
        assert mg.Booster(model_file=model).objective == "multilabel"
        assert main(["predict", "--model", str(model), "--data", str(path), "--out", str(out)]) == 0
        np.testing.assert_allclose(np.loadtxt(out, delimiter=","), want.predict(X), rtol=1e-6, atol=1e-9)
    capsys.readouterr()
    assert main(["evaluate", "--model", str(tmp_path / "xmc.json"), "--data", str(paths["xmc"]),
                 "--metric", "precision_at_k"]) == 0
    printed = dict(line.split("\t") for line in capsys.readouterr().out.strip().splitlines())
    p1 = mg.xmc.metrics.precision_at_k(Y, want.predict(X), 1)[0]
    assert float(printed["precision@1"]) == pytest.approx(p1, rel=1e-6)
    # label trees from the command line
    tree_model, ranked = tmp_path / "trees.npz", tmp_path / "top.txt"
    assert main(["xmc", "train", "--data", str(paths["xmc"]), "--param", "branching=2", "--param", "n_trees=1",
                 "--model", str(tree_model)]) == 0
    capsys.readouterr()
    assert main(["xmc", "predict", "--model", str(tree_model), "--data", str(paths["libsvm"]), "--top-k", "3",
                 "--out", str(ranked)]) == 0
    printed = dict(line.split("\t") for line in capsys.readouterr().out.strip().splitlines()[1:])
    clf = mg.xmc.LabelTreeClassifier(branching=2, n_trees=1).fit(X, Y)
    idx, scores = clf.predict(X, top_k=3)
    assert float(printed["P@1"]) == pytest.approx(mg.xmc.metrics.precision_at_k(Y, (idx, scores), 1)[0], rel=1e-6)
    first = ranked.read_text().splitlines()[0].split()
    assert [int(t.split(":")[0]) for t in first] == [i for i in idx[0] if i >= 0]


def test_contributions_from_the_command_line(csv_files, tmp_path):
    import multigrove as mg
    path, X, Y = csv_files
    model, out = tmp_path / "m.json", tmp_path / "c.csv"
    assert main(["train", "--data", str(path), "--targets", "2", "--rounds", "5", "--model", str(model)]) == 0
    assert main(["predict", "--model", str(model), "--data", str(path), "--targets", "2", "--contributions",
                 "--out", str(out)]) == 0
    got = np.loadtxt(out, delimiter=",").reshape(400, 4, 2)
    np.testing.assert_allclose(got.sum(axis=1), mg.Booster(model_file=model).predict(X), rtol=1e-7, atol=1e-7)


def test_parse_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "words.csv"
    bad.write_text("a,b\n1,2\n3,seven\n")
    with pytest.raises(SystemExit, match=r"words.csv, line 3: column 'b' holds 'seven', not a number"):
        main(["train", "--data", str(bad), "--model", str(tmp_path / "m.json")])
    svm = tmp_path / "bad.svm"
    svm.write_text("0,1 1:0.5 2:1\n2 3:x\n")
    with pytest.raises(SystemExit, match="bad.svm, line 2"):
        main(["train", "--data", str(svm), "--model", str(tmp_path / "m.json")])
    with pytest.raises(SystemExit, match="--format"):
        main(["train", "--data", str(tmp_path / "m.json"), "--model", str(tmp_path / "m2.json")]
             if (tmp_path / "m.json").write_text("{}") else [])
    toml = tmp_path / "bad.toml"
    toml.write_text("num_leaves = \n")
    good = tmp_path / "good.csv"
    good.write_text("a,y\n1,2\n3,4\n")
    with pytest.raises(SystemExit, match="bad.toml: not valid TOML"):
        main(["train", "--data", str(good), "--config", str(toml), "--model", str(tmp_path / "m.json")])


def test_every_option_has_help():
    from multigrove.cli import _parser

    def walk(parser):
        for action in parser._actions:
            if action.dest == "help":
                continue
            if hasattr(action, "choices") and isinstance(action.choices, dict):
                for sub in action.choices.values():
                    yield from walk(sub)
            else:
                yield parser.prog, action
    missing = [f"{prog} {'/'.join(a.option_strings)}" for prog, a in walk(_parser()) if not a.help]
    assert not missing, missing


def test_the_demo_trains_both_models_and_keeps_compilation_out_of_its_timings(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("kernels compiled or read from the cache:") and "not in the timings below" in lines[0]
    assert "predictions identical = True" in out
    assert "multi_output:   200 trees" in out and "one_vs_all  :  1600 trees" in out
