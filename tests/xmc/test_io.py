"""ARFF reading: dense and sparse rows, nominal values, and line-numbered errors."""
import gzip

import numpy as np
import pytest

from multigrove.xmc.io import read_arff

HEADER = """% a comment
@relation 'toy'
@attribute x1 numeric
@attribute 'x 2' real
@attribute colour {red,green}
@attribute lab {0,1}
@data
"""


def test_dense_and_sparse_rows(tmp_path):
    path = tmp_path / "d.arff"
    path.write_text(HEADER + "1.5,2,green,1\n?,-1e3,red,0\n")
    a = read_arff(path)
    assert a.names == ["x1", "x 2", "colour", "lab"] and a.relation == "toy"
    np.testing.assert_array_equal(a.X, [[1.5, 2, 1, 1], [np.nan, -1000, 0, 0]])
    s = tmp_path / "s.arff.gz"
    with gzip.open(s, "wt") as fh:
        fh.write(HEADER + "{0 1.5, 3 1}\n{}\n{1 4, 2 green}\n")
    b = read_arff(s)
    np.testing.assert_array_equal(b.X.toarray(), [[1.5, 0, 0, 1], [0, 0, 0, 0], [0, 4, 1, 0]])


@pytest.mark.parametrize("body,match", [
    ("1,2,red\n", r"line 8: expected 4 comma-separated values, got 3"),
    ("1,x,red,0\n", r"line 8: expected a number for attribute 'x 2', got 'x'"),
    ("1,2,blue,0\n", r"line 8: value 'blue' of attribute 'colour' is not one of its declared values"),
    ("{0 1, 7 1}\n", r"line 8: sparse index 7 outside \[0, 4\)"),
    ("{2 red, 1 3}\n", r"line 8: sparse indices must increase, got 1 after 2"),
    ("{0 1\n", r"line 8: sparse row must end with '}'"),
    ("{0}\n", r"line 8: expected '<index> <value>' in a sparse row, got '0'"),
])
def test_malformed_rows_name_the_line(tmp_path, body, match):
    path = tmp_path / "bad.arff"
    path.write_text(HEADER + body)
    with pytest.raises(ValueError, match="bad.arff, " + match):
        read_arff(path)


def test_malformed_header(tmp_path):
    path = tmp_path / "h.arff"
    path.write_text("@relation r\n@attribute x strnig\n@data\n")
    with pytest.raises(ValueError, match=r"h.arff, line 2: unknown type 'strnig' for attribute 'x'"):
        read_arff(path)
    path.write_text("@relation r\n@attribute x numeric\n")
    with pytest.raises(ValueError, match="no '@data' section found"):
        read_arff(path)
    path.write_text("@relation r\n@attribute x numeric\nhello\n@data\n")
    with pytest.raises(ValueError, match="line 3: expected '@relation', '@attribute' or '@data'"):
        read_arff(path)


# ---------------------------------------------------------------- multi-label formats
import scipy.sparse as sp  # noqa: E402

from multigrove.xmc import io as xio  # noqa: E402


def _pair(rng, n=30, d=12, L=7):
    X = sp.random(n, d, density=0.3, random_state=1, format="csr", dtype=np.float32)
    X.data = (rng.normal(size=X.nnz) * 10.0 ** rng.integers(-3, 4, X.nnz)).astype(np.float32)
    Y = sp.random(n, L, density=0.25, random_state=2, format="csr")
    Y.data[:] = 1
    return X, Y.astype(np.float32)


def _same(A, B):
    assert A.shape == B.shape
    assert (A != B).nnz == 0


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_round_trips(tmp_path, rng, suffix):
    X, Y = _pair(rng)
    Y.data[Y.indptr[3]:Y.indptr[4]] = 0  # a row without labels
    Y.eliminate_zeros()
    xio.write_xmc(tmp_path / f"a.txt{suffix}", X, Y)
    _pairs = [xio.read_xmc(tmp_path / f"a.txt{suffix}")]
    for zb in (True, False):
        xio.write_libsvm(tmp_path / f"b{zb}.txt{suffix}", X, Y, zero_based=zb)
        _pairs.append(xio.read_libsvm(tmp_path / f"b{zb}.txt{suffix}", n_features=X.shape[1], n_labels=Y.shape[1],
                                      zero_based=zb))
    xio.write_mulan(tmp_path / f"c.arff{suffix}", X, Y, xml_path=tmp_path / "c.xml")
    _pairs.append(xio.read_mulan(tmp_path / f"c.arff{suffix}", tmp_path / "c.xml"))
    _pairs.append(xio.read_mulan(tmp_path / f"c.arff{suffix}", Y.shape[1]))
    xio.save_npz(tmp_path / "d.npz", X, Y)
    _pairs.append(xio.load_npz(tmp_path / "d.npz"))
    for Xr, Yr in _pairs:
        assert Xr.dtype == np.float32 and sp.isspmatrix_csr(Xr) and sp.isspmatrix_csr(Yr)
        _same(Xr, X)
        _same(Yr, Y)


def test_xmc_reader_details(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("3 5 4\n1,3 0:1.5 4:-2e-1\n 2:3\n\n0 1:7 # a comment\n")
    X, Y = xio.read_xmc(path)
    np.testing.assert_allclose(X.toarray(), [[1.5, 0, 0, 0, -0.2], [0, 0, 3, 0, 0], [0, 7, 0, 0, 0]])
    np.testing.assert_array_equal(Y.toarray(), [[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]])


def test_libsvm_auto_base_and_real_copy(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("0,2 1:1 3:2\n1 2:5\n")
    X, Y = xio.read_libsvm(path)  # no index 0: read as 1-based
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 5, 0]])
    np.testing.assert_array_equal(Y.toarray(), [[1, 0, 1], [0, 1, 0]])


BAD_XMC = [
    ("2 3 2\n0 1:1\n", "declares 2 rows but the file holds 1"),
    ("1 3 2\n0 1:1\n1 2:1\n", "line 3: more data rows than the 1 the header declares"),
    ("2 3\n0 1:1\n", "line 1: expected the header 'N D L'"),
    ("1 3 2\nx 1:1\n", "line 2: expected labels as comma-separated non-negative integers"),
    ("1 3 2\n0,1, 1:1\n", "line 2: expected labels"),
    ("1 3 2\n0 1-1\n", "line 2: expected a feature as 'index:value', got '1-1'"),
    ("1 3 2\n0 a:1\n", "line 2: expected a feature index that is a non-negative integer"),
    ("1 3 2\n0 1:abc\n", "line 2: expected a feature value that is a finite number"),
    ("1 3 2\n0 1:1e999\n", "line 2: expected a feature value that is a finite number"),
    ("1 3 2\n0 5:1\n", "line 2: feature index 5 is outside \\[0, 3\\)"),
    ("1 3 2\n2 1:1\n", "line 2: label index 2 is outside \\[0, 2\\)"),
    ("1 3 2\n0 1:1 1:2\n", "line 2: a feature index appears twice"),
    ("1 3 2\n0,0 1:1\n", "line 2: a label index appears twice"),
    ("", "empty file"),
]


@pytest.mark.parametrize("text,message", BAD_XMC)
def test_each_malformed_xmc_line(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as err:
        xio.read_xmc(path)
    assert str(path) in str(err.value)


def test_malformed_libsvm_and_mulan(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("0 1:1\n1 0:2\n")
    with pytest.raises(ValueError, match="line 2: feature index 0 in a file read as 1-based"):
        xio.read_libsvm(path, zero_based=False)
    with pytest.raises(ValueError, match="line 1: feature index 1 is outside \\[0, 1\\)"):
        xio.read_libsvm(path, n_features=1)
    a = tmp_path / "m.arff"
    a.write_text("@relation r\n@attribute f numeric\n@attribute l numeric\n@data\n1.5,2\n")
    with pytest.raises(ValueError, match="label 'l' is 2.0, expected 0 or 1"):
        xio.read_mulan(a, 1)
    with pytest.raises(ValueError, match=r"label attribute\(s\) \['nope'\]"):
        xio.read_mulan(a, ["nope"])
    x = tmp_path / "bad.xml"
    x.write_text("<labels><label name='l'></labels>")
    with pytest.raises(ValueError, match="malformed XML"):
        xio.read_mulan(a, x)
    # a '?' is never read as 0: a missing feature or label in dense rows is named (dense rows, as sparse ones)
    for body, message in (("?,1\n", "data row 1 has a missing feature value"), ("1,?\n", "label 'l' is nan")):
        a.write_text("@relation r\n@attribute f numeric\n@attribute l {0,1}\n@data\n" + body)
        with pytest.raises(ValueError, match=message):
            xio.read_mulan(a, 1)


def test_npz_is_validated_and_never_unpickled(tmp_path, rng):
    X, Y = _pair(rng)
    path = tmp_path / "d.npz"
    xio.save_npz(path, X, Y)
    z = dict(np.load(path))
    z["X_indices"] = z["X_indices"] + 100  # out of range
    np.savez(tmp_path / "bad.npz", **z)
    with pytest.raises(ValueError, match="X is not a valid CSR matrix"):
        xio.load_npz(tmp_path / "bad.npz")
    np.savez(tmp_path / "obj.npz", format=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="not a readable .npz file|missing arrays"):
        xio.load_npz(tmp_path / "obj.npz")


def test_real_files_agree(rng):
    from tests.conftest import shared_data_or_skip
    root = shared_data_or_skip("bibtex")
    X1, Y1 = xio.read_xmc(root / "bibtex" / "xmc_derived" / "bibtex_train.txt.gz")
    X2, Y2 = xio.read_mulan(root / "bibtex" / "bibtex-train.arff.gz", root / "bibtex" / "bibtex.xml")
    assert X1.shape == (4880, 1836) and Y1.shape == (4880, 159)
    _same(X1, X2)
    _same(Y1, Y2)
    yroot = shared_data_or_skip("yeast")
    X3, Y3 = xio.read_libsvm(yroot / "yeast" / "libsvm" / "yeast_train.txt.gz")
    X4, Y4 = xio.read_mulan(yroot / "yeast" / "yeast-train.arff.gz", 14)  # the copy keeps the ARFF label order
    np.testing.assert_allclose(X3.toarray(), X4.toarray(), rtol=1e-6)
    _same(Y3, Y4)


def test_missing_values_stay_missing_in_either_layout(tmp_path):
    """A '?' is NaN whether X comes back dense or CSR, from dense or from sparse rows."""
    dense = tmp_path / "d.arff"
    dense.write_text(HEADER + "?,2,green,1\n0,0,red,0\n")
    as_csr = read_arff(dense, sparse=True).X
    assert as_csr.format == "csr" and as_csr.nnz == 4  # the NaN is an explicit entry, the zeros are not
    np.testing.assert_array_equal(as_csr.toarray(), [[np.nan, 2, 1, 1], [0, 0, 0, 0]])
    sparse = tmp_path / "s.arff"
    sparse.write_text(HEADER + "{0 ?, 3 1}\n{}\n")
    np.testing.assert_array_equal(read_arff(sparse, sparse=False).X, [[np.nan, 0, 0, 1], [0, 0, 0, 0]])
    assert np.isnan(read_arff(sparse).X.data).sum() == 1
