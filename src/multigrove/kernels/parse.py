"""Parser for sparse text rows ``l1,l2 f:v f:v ...`` (XMC repository and LIBSVM multi-label formats).

One pass over the raw bytes; the caller allocates outputs sized by upper bounds (number of ':'
for features, number of ',' plus lines for labels).  On a malformed token the kernel stops and
returns an error code with the 1-based line number; the Python layer turns it into a message.
"""
import numpy as np
from numba import njit

OK = 0
ERR_LABEL = 1        # a label is not a non-negative integer
ERR_PAIR = 2         # a feature token is not 'index:value'
ERR_INDEX = 3        # a feature index is not a non-negative integer
ERR_VALUE = 4        # a feature value is not a finite number
ERR_TOO_MANY = 5     # more data rows than the output can hold (header N too small)

_SP = 32
_TAB = 9
_CR = 13
_LF = 10
_COMMA = 44
_COLON = 58
_HASH = 35


@njit(cache=True, inline="always", error_model="numpy")
def _is_space(c):
    return c == _SP or c == _TAB or c == _CR


@njit(cache=True, nogil=True, error_model="numpy")
def _parse_uint(buf, a, b):
    """Non-negative decimal integer in buf[a:b]; -1 when malformed."""
    if a >= b or b - a > 18:
        return -1
    v = 0
    for p in range(a, b):
        c = np.int64(buf[p]) - 48
        if c < 0 or c > 9:
            return -1
        v = v * 10 + c
    return v


@njit(cache=True, nogil=True, error_model="numpy")
def _parse_float(buf, a, b):
    """(ok, value) of a decimal number with optional sign, fraction and exponent in buf[a:b]."""
    p = a
    sign = 1.0
    if p < b and (buf[p] == 45 or buf[p] == 43):
        if buf[p] == 45:
            sign = -1.0
        p += 1
    mant = 0.0
    digits = 0
    scale = 0
    while p < b and 48 <= buf[p] <= 57:
        mant = mant * 10.0 + (np.int64(buf[p]) - 48)
        digits += 1
        p += 1
    if p < b and buf[p] == 46:
        p += 1
        while p < b and 48 <= buf[p] <= 57:
            mant = mant * 10.0 + (np.int64(buf[p]) - 48)
            digits += 1
            scale -= 1
            p += 1
    if digits == 0:
        return False, 0.0
    if p < b and (buf[p] == 101 or buf[p] == 69):
        p += 1
        esign = 1
        if p < b and (buf[p] == 45 or buf[p] == 43):
            if buf[p] == 45:
                esign = -1
            p += 1
        e = 0
        ed = 0
        while p < b and 48 <= buf[p] <= 57:
            if e < 100000:
                e = e * 10 + (np.int64(buf[p]) - 48)
            ed += 1
            p += 1
        if ed == 0:
            return False, 0.0
        scale += esign * e
    if p != b:
        return False, 0.0
    if scale >= 0:
        v = mant * 10.0 ** scale
    elif scale >= -300:
        v = mant / 10.0 ** (-scale)
    else:  # two steps, so that 10**-scale does not overflow before the division
        v = mant / 10.0 ** (-scale - 300) / 1e300
    if not np.isfinite(v):
        return False, 0.0
    return True, sign * v


@njit(cache=True, nogil=True, error_model="numpy")
def parse_sparse_rows(buf, start, line0, max_rows,
                      row_line, lab_indptr, lab_idx, feat_indptr, feat_idx, feat_val, out_counts):
    """IN buf uint8 bytes, start offset, line0 = line number of the byte at `start`, max_rows.
    OUT row_line (max_rows,) line number of each row; lab_indptr/feat_indptr (max_rows + 1,);
    lab_idx, feat_idx int64 and feat_val float64 (upper-bound sized); out_counts[0:3] = rows, labels, features.
    Empty lines and '#' comments are skipped.  A line whose first character is a space has no labels.
    Returns (error code, line number, byte offset of the bad token)."""
    n = buf.shape[0]
    p = start
    line = line0
    rows = 0
    nl = 0
    nf = 0
    lab_indptr[0] = 0
    feat_indptr[0] = 0
    while p < n:
        e = p
        while e < n and buf[e] != _LF:
            e += 1
        # [p, e) is one line; strip a comment
        end = p
        while end < e and buf[end] != _HASH:
            end += 1
        q = p
        while q < end and _is_space(buf[q]):
            q += 1
        if q < end:  # not blank
            if rows >= max_rows:
                return ERR_TOO_MANY, line, p
            row_line[rows] = line
            tok_end = q
            while tok_end < end and not _is_space(buf[tok_end]):
                tok_end += 1
            has_colon = False
            for t in range(q, tok_end):
                if buf[t] == _COLON:
                    has_colon = True
                    break
            if q == p and not has_colon:  # a label list
                a = q
                while a < tok_end:
                    b = a
                    while b < tok_end and buf[b] != _COMMA:
                        b += 1
                    v = _parse_uint(buf, a, b)
                    if v < 0:
                        return ERR_LABEL, line, a
                    lab_idx[nl] = v
                    nl += 1
                    a = b + 1
                    if b < tok_end and a == tok_end:  # trailing comma
                        return ERR_LABEL, line, b
                q = tok_end
            # features
            while True:
                while q < end and _is_space(buf[q]):
                    q += 1
                if q >= end:
                    break
                t = q
                colon = -1
                while t < end and not _is_space(buf[t]):
                    if buf[t] == _COLON and colon < 0:
                        colon = t
                    t += 1
                if colon < 0:
                    return ERR_PAIR, line, q
                j = _parse_uint(buf, q, colon)
                if j < 0:
                    return ERR_INDEX, line, q
                ok, val = _parse_float(buf, colon + 1, t)
                if not ok:
                    return ERR_VALUE, line, colon + 1
                feat_idx[nf] = j
                feat_val[nf] = val
                nf += 1
                q = t
            rows += 1
            lab_indptr[rows] = nl
            feat_indptr[rows] = nf
        p = e + 1
        line += 1
    out_counts[0] = rows
    out_counts[1] = nl
    out_counts[2] = nf
    return OK, line, p


@njit(cache=True, nogil=True, error_model="numpy")
def first_duplicate(indptr, indices):
    """IN a CSR pattern whose rows are sorted.  Returns the first row holding a repeated index, or -1."""
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i] + 1, indptr[i + 1]):
            if indices[p] == indices[p - 1]:
                return i
    return -1
