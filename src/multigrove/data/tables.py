"""Tables from CSV, TSV and Parquet files, read by pyarrow (an optional dependency: the ``io`` extra).

``read_table`` returns a pyarrow Table; a malformed row raises ValueError naming the file and its
line (the CSV parser runs on one thread, so that it knows the line).  ``numeric_columns`` turns the
columns into a float64 matrix; a value that is not a number names its column and line.  Missing
values (empty, NA, NaN, ?, NULL, ...) are NaN.
"""
from __future__ import annotations

import numpy as np

NULLS = ["", "?", "NA", "N/A", "n/a", "NaN", "nan", "-nan", "NULL", "null", "#N/A", "None"]


def read_table(path: str, fmt: str = "csv"):
    """A pyarrow Table from a CSV / TSV / Parquet file; a malformed row names the file and its line."""
    try:
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(f"reading {fmt} files needs a working pyarrow (pip install 'multigrove[io]'): {exc}") \
            from None
    import pyarrow as pa
    if fmt == "parquet":
        try:
            return pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(f"{path}: not a readable Parquet file ({exc})") from None
    # one thread: the parser then knows each bad row's line number
    read = pcsv.ReadOptions(use_threads=False)
    parse = pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
    convert = pcsv.ConvertOptions(null_values=NULLS, strings_can_be_null=True)
    try:
        return pcsv.read_csv(path, read_options=read, parse_options=parse, convert_options=convert)
    except pa.ArrowInvalid as exc:
        text = str(exc)
        if "Row #" in text:  # "CSV parse error: Row #3: Expected 2 columns, got 1: ..."
            line = text.split("Row #", 1)[1].split(":", 1)[0]
            raise ValueError(f"{path}, line {line}: {text.split(':', 2)[-1].strip()}") from None
        raise ValueError(f"{path}: {text}") from None


def categorical_columns(table) -> list[str]:
    """The names of a pyarrow Table's dictionary columns (a Parquet file's categorical columns)."""
    import pyarrow as pa
    return [name for name, column in zip(table.column_names, table.columns) if pa.types.is_dictionary(column.type)]


def numeric_columns(table, path: str) -> np.ndarray:
    """(n, columns) float64 from a pyarrow Table of numbers (and booleans); a value that is not a
    number names its column and line."""
    import pyarrow as pa
    out = np.empty((table.num_rows, table.num_columns))
    for j, (name, column) in enumerate(zip(table.column_names, table.columns)):
        kind = column.type
        if pa.types.is_boolean(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind) \
                or pa.types.is_null(kind):
            out[:, j] = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
            continue
        values = column.to_pylist()
        for i, v in enumerate(values):
            try:
                out[i, j] = np.nan if v is None else float(v)
            except (TypeError, ValueError):
                where = f"line {i + 2}" if path.lower().endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")) else f"row {i}"
                raise ValueError(f"{path}, {where}: column {name!r} holds {v!r}, not a number") from None
    return out
