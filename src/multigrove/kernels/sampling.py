"""Row selection for GOSS in one pass over the rows."""
from numba import njit


@njit(cache=True)
def goss_select(magnitude, threshold, n_top, n_other, uniforms, out_rows, out_left_out, out_other):
    """Keep the n_top rows of largest magnitude and draw n_other of the rest uniformly without
    replacement (Knuth's selection sampling: each row of the rest is taken with probability
    still-needed / still-left, so exactly n_other are drawn), all in ascending row order.

    IN  magnitude (n,) float64; threshold: the n_top-th largest magnitude (rows above it are top
        rows; rows equal to it fill the top in row order); uniforms (n,) float64 in [0, 1).
    OUT out_rows (n_top + n_other,) int32: the kept rows, ascending.
    OUT out_left_out (n - n_top - n_other,) int32: the other rows, ascending.
    OUT out_other (n_other,) int32: the drawn rows of the rest, ascending.
    """
    n = magnitude.shape[0]
    n_above = 0
    for i in range(n):
        if magnitude[i] > threshold:
            n_above += 1
    ties_left = n_top - n_above  # rows equal to the threshold that still belong to the top
    rest_left = n - n_top
    needed = n_other
    k = 0
    j = 0
    q = 0
    for i in range(n):
        m = magnitude[i]
        top = m > threshold
        if not top and m == threshold and ties_left > 0:
            top = True
            ties_left -= 1
        if top:
            out_rows[k] = i
            k += 1
            continue
        if needed > 0 and uniforms[i] * rest_left < needed:
            out_rows[k] = i
            out_other[j] = i
            k += 1
            j += 1
            needed -= 1
        else:
            out_left_out[q] = i
            q += 1
        rest_left -= 1
