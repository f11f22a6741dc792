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
    p = tmp_path / "d.arff"
    p.write_text(HEADER + "1.5,2,green,1\n?,-1e3,red,0\n")
    a = read_arff(p)
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
    p = tmp_path / "bad.arff"
    p.write_text(HEADER + body)
    with pytest.raises(ValueError, match="bad.arff, " + match):
        read_arff(p)


def test_malformed_header(tmp_path):
    p = tmp_path / "h.arff"
    p.write_text("@relation r\n@attribute x strnig\n@data\n")
    with pytest.raises(ValueError, match=r"h.arff, line 2: unknown type 'strnig' for attribute 'x'"):
        read_arff(p)
    p.write_text("@relation r\n@attribute x numeric\n")
    with pytest.raises(ValueError, match="no '@data' section found"):
        read_arff(p)
    p.write_text("@relation r\n@attribute x numeric\nhello\n@data\n")
    with pytest.raises(ValueError, match="line 3: expected '@relation', '@attribute' or '@data'"):
        read_arff(p)
