"""One rule for small or degenerate input, used by every function of :mod:`judgelab.stats`.

An estimate that the data cannot support is NaN with a ``note`` naming the cause; no function of
this package lets scipy, pingouin, sklearn or krippendorff raise on degenerate data (bad
*arguments* -- an unknown method, a missing column -- are still errors, naming what is wrong).

Minimums (the same for both studies and the appendix)
------------------------------------------------------

=====================================  ===========================================================
estimate                               needs
=====================================  ===========================================================
ICC, Krippendorff's alpha, Kendall's W ``MIN_ITEMS`` = 3 items (targets), each rated by
                                       ``MIN_RATERS`` = 2 raters (alpha: 3 *pairable* items)
Cohen's d, Student / Welch t           ``MIN_PER_GROUP`` = 2 values in each group
paired t, d_z, Wilcoxon signed-rank   ``MIN_PAIRED`` = 2 pairs (Wilcoxon: 2 non-zero differences)
Pearson / Spearman / Kendall           ``MIN_PAIRS`` = 3 pairs; a Fisher-z CI ``MIN_CI_PAIRS`` = 4
                                       (Kendall's: 5, its standard error has n - 4)
one-way ANOVA                          2 groups with values and N - k >= 1 within-group df
AUC, Mann-Whitney U                    ``MIN_PER_CLASS`` = 1 value in each group
MAD, exact / within-1 agreement        an item counts only with >= 2 ratings
=====================================  ===========================================================

Why these numbers. A sample variance (ddof = 1) needs two values, so d, t and the paired tests
need 2 per group / 2 pairs. A correlation of 2 pairs is always +-1 and has n - 2 = 0 degrees of
freedom, so a correlation needs 3; the Fisher-z standard error 1 / sqrt(n - 3) needs 4. The
reliability coefficients compare the variance *between items* with the variance within them;
with 2 items the between-item mean square has a single degree of freedom and the coefficient
jumps between its bounds on one pair of items (its F-based CI spans almost [-1, 1]); we use
3 items, the same threshold as for a correlation (a reliability coefficient is one), rather than
the 5 the SAGE code used (any number above 3 is arbitrary; the CI shows the remaining
uncertainty). The rank statistics AUC / U are defined with one value per group.

Degenerate data: one tolerance
------------------------------
Values are *equal* when they differ by at most :data:`REL_TOL` = 1e-9 of the data's scale, the
largest absolute value in the data (at least 1; :func:`tolerance`). The same rule in every
function: a side, a group, a table or a set of differences is *constant* when its range is within
the tolerance (:func:`is_constant`), a variance or a mean square is *zero* when its square root is
(:func:`is_zero_spread`), and rank statistics (Spearman, Kendall, W, AUC, U, Wilcoxon, the ordinal
and nominal alpha) rank values rounded to the tolerance grid (:func:`snap`), so two scores that
differ by one ulp (a story mean of 4.3 and 4.0 + 0.3) tie. Story means are not rounded, so without
it groups whose exact means are all 4.0 and 3.0 give d = 1e16.

Constant ratings (one value in the whole table) make ICC, alpha and W undefined (0 / 0): NaN,
note ``"constant ratings"``; a constant side makes a correlation undefined (``"constant x"``);
zero variance in both groups makes d and t undefined (``"zero variance in both groups"``; one
constant group is fine: the pooled SD is > 0); equal paired differences make the paired t and
d_z undefined (``"all differences 0"``, ``"constant differences"``). ICC also has two designs of
its own (:mod:`judgelab.stats.reliability`): no variance between items (``"no variance between
items"``, e.g. raters who differ only by an offset) and no residual variance (``"raters agree on
every item"``: ICC = 1, F and the CI undefined).

Notes (exact wording, joined with "; ")
--------------------------------------
``"empty table"``, ``"one rater"``, ``"constant ratings"``, ``"2 items < 3"`` (from
:func:`too_few`: count, unit, "<", minimum), ``"NaN dropped: k"`` (a value *was* computed after
dropping k missing values -- information, not a failure; for the complete-case ICC and W, k counts
the items dropped), ``"NaN in input: k"`` (nan_policy "propagate": the estimate is NaN because k
values are missing).

Missing values: ``nan_policy``
------------------------------
As in scipy / pingouin, every function takes ``nan_policy``: ``"omit"`` (default: drop missing
values -- listwise for paired data and for complete-case designs -- and say how many in the note),
``"raise"`` (a ValueError naming how many and where) or ``"propagate"`` (the estimate is NaN).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

MIN_ITEMS = 3
MIN_RATERS = 2
MIN_PER_GROUP = 2
MIN_PAIRED = 2
MIN_PAIRS = 3
MIN_CI_PAIRS = 4
MIN_PER_CLASS = 1

NAN_POLICIES = ("omit", "raise", "propagate")
REL_TOL = 1e-9
"""Values equal within this fraction of the data's scale count as equal (module docstring)."""
DECIMALS = 9
"""Decimals kept where a score difference is compared with a threshold (SAGE's |R5 - R4| < 0.3,
|validator - evaluator| < 0.5): 1e-9 on a 1-5 scale, the same tolerance as :data:`REL_TOL`, so
floating-point noise (4.3 - 4.0 = 0.29999999999999982) is neither variance nor a smaller change."""

EMPTY = "empty table"
ONE_RATER = "one rater"
CONSTANT = "constant ratings"
NAN = float("nan")


def too_few(n: int, minimum: int, unit: str) -> str:
    """The note for a count below its minimum.

    Parameters
    ----------
    n, minimum : int
        The count and the least it needs.
    unit : str
        What is counted.

    Returns
    -------
    str

    Examples
    --------
    >>> too_few(2, 3, "items")
    '2 items < 3'
    """
    return f"{n} {unit} < {minimum}"


def nan_dropped(k: int) -> str:
    """The note for k dropped missing values ("" when none were dropped).

    Parameters
    ----------
    k : int
        Missing values dropped.

    Returns
    -------
    str

    Examples
    --------
    >>> nan_dropped(2), nan_dropped(0)
    ('NaN dropped: 2', '')
    """
    return f"NaN dropped: {k}" if k else ""


def join(*notes: str | None) -> str:
    """Notes joined with "; ", empty ones and repeats left out.

    Parameters
    ----------
    *notes : str or None
        The notes, in order.

    Returns
    -------
    str

    Examples
    --------
    >>> join("constant x", "", None, "NaN dropped: 1", "constant x")
    'constant x; NaN dropped: 1'
    """
    return "; ".join(dict.fromkeys(n for n in notes if n))


def check_policy(nan_policy: str) -> str:
    """``nan_policy`` itself, or a ValueError listing the allowed ones.

    Parameters
    ----------
    nan_policy : str
        One of :data:`NAN_POLICIES`.

    Returns
    -------
    str

    Examples
    --------
    >>> check_policy("omit")
    'omit'
    >>> check_policy("drop")
    Traceback (most recent call last):
    ValueError: nan_policy must be one of ('omit', 'raise', 'propagate'), not 'drop'
    """
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be one of {NAN_POLICIES}, not {nan_policy!r}")
    return nan_policy


def missing_note(n_missing: int, nan_policy: str, where: str) -> tuple[str, bool]:
    """Apply ``nan_policy`` to ``n_missing`` missing values found in ``where``.

    Parameters
    ----------
    n_missing : int
        Missing values found.
    nan_policy : {"omit", "raise", "propagate"}
        What to do with them.
    where : str
        Where they were (named in the error).

    Returns
    -------
    tuple
        (note, usable): "omit" -> ("NaN dropped: k", True); "propagate" -> ("NaN in input: k",
        False), the caller returns NaN; "raise" -> ValueError naming ``where`` and the count.

    Examples
    --------
    >>> missing_note(2, "omit", "x"), missing_note(2, "propagate", "x"), missing_note(0, "raise", "x")
    (('NaN dropped: 2', True), ('NaN in input: 2', False), ('', True))
    """
    check_policy(nan_policy)
    k = int(n_missing)
    if not k:
        return "", True
    if nan_policy == "raise":
        raise ValueError(f"{where}: {k} missing value(s) (NaN); drop them or pass nan_policy='omit'")
    if nan_policy == "propagate":
        return f"NaN in input: {k}", False
    return nan_dropped(k), True


def as_float_array(values, name: str) -> np.ndarray:
    """A 1-D float array, or a ValueError naming the argument.

    Parameters
    ----------
    values : array_like
        Numbers (a 2-D input is flattened).
    name : str
        The argument's name, for the error.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> as_float_array([1, 2], "x").tolist()
    [1.0, 2.0]
    >>> as_float_array(["a"], "x")
    Traceback (most recent call last):
    ValueError: x: values must be numbers
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: values must be numbers") from None
    if arr.ndim != 1:
        arr = arr.ravel()
    return arr


def require_columns(data: pd.DataFrame, columns: Iterable[str], what: str = "data") -> None:
    """ValueError naming the columns of ``columns`` missing from ``data``.

    Parameters
    ----------
    data : pandas.DataFrame
        The table.
    columns : iterable of str
        The columns it needs.
    what : str
        The table's name in the error.

    Returns
    -------
    None

    Examples
    --------
    >>> require_columns(pd.DataFrame({"a": [1]}), ["a", "b"], "ratings")
    Traceback (most recent call last):
    ValueError: ratings: missing column(s) ['b']; has ['a']
    """
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; has {list(data.columns)}")


def frame(rows: Sequence[Mapping], columns: Sequence[str]) -> pd.DataFrame:
    """Result rows as a DataFrame with the columns in this order (NaN for absent keys).

    Parameters
    ----------
    rows : sequence of mapping
        The result rows.
    columns : sequence of str
        The columns, in order.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> frame([{"r": 0.5}], ["r", "note"]).values.tolist()
    [[0.5, nan]]
    """
    return pd.DataFrame(list(rows), columns=list(columns))


def undefined(columns: Sequence[str], note: str, **known) -> dict:
    """A result row of NaNs for ``columns`` with the ``known`` entries filled in and ``note``.

    Parameters
    ----------
    columns : sequence of str
        The row's columns.
    note : str
        Why the estimate is undefined.
    **known
        The entries that are known (counts, labels).

    Returns
    -------
    dict

    Examples
    --------
    >>> undefined(("r", "n", "note"), "2 pairs < 3", n=2)
    {'r': nan, 'n': 2, 'note': '2 pairs < 3'}
    """
    row = dict.fromkeys(columns, NAN)
    row.update(known)
    row["note"] = note
    return row


def two_groups(x, y, nan_policy: str = "omit") -> tuple[np.ndarray, np.ndarray, str, bool]:
    """``x`` and ``y`` as float arrays after ``nan_policy`` (each group on its own), the note, and
    whether an estimate can be made (False under "propagate" with a missing value).

    Parameters
    ----------
    x, y : array_like
        The two groups.
    nan_policy : {"omit", "raise", "propagate"}
        Missing values.

    Returns
    -------
    tuple
        (x, y, note, usable).

    Examples
    --------
    >>> x, y, note, usable = two_groups([1, np.nan], [2, 3])
    >>> x.tolist(), y.tolist(), note, usable
    ([1.0], [2.0, 3.0], 'NaN dropped: 1', True)
    """
    x, y = as_float_array(x, "x"), as_float_array(y, "y")
    mx, my = np.isnan(x), np.isnan(y)
    note, usable = missing_note(int(mx.sum() + my.sum()), nan_policy, "x, y")
    return x[~mx], y[~my], note, usable


def group_problem(n_x: int, n_y: int, minimum: int) -> str:
    """The note for two groups of which one or both have fewer than ``minimum`` values, or "".

    Parameters
    ----------
    n_x, n_y : int
        The group sizes.
    minimum : int
        The least each group needs.

    Returns
    -------
    str

    Examples
    --------
    >>> group_problem(1, 0, 2)
    '1 values in x < 2; 0 values in y < 2'
    >>> group_problem(3, 3, 2)
    ''
    """
    return join(*(too_few(n, minimum, f"values in {g}") for g, n in (("x", n_x), ("y", n_y)) if n < minimum))


def paired(x, y, nan_policy: str = "omit") -> tuple[np.ndarray, np.ndarray, str, bool]:
    """Paired arrays with pairs missing either side handled by ``nan_policy`` (listwise).

    Parameters
    ----------
    x, y : array_like
        Equally long; different lengths are a ValueError.
    nan_policy : {"omit", "raise", "propagate"}
        Pairs missing a side.

    Returns
    -------
    tuple
        (x, y, note, usable).

    Examples
    --------
    >>> x, y, note, usable = paired([1, 2, np.nan], [4, np.nan, 6])
    >>> x.tolist(), y.tolist(), note
    ([1.0], [4.0], 'NaN dropped: 2')
    """
    x, y = as_float_array(x, "x"), as_float_array(y, "y")
    if x.shape != y.shape:
        raise ValueError(f"paired data: x has {len(x)} values, y {len(y)}")
    miss = np.isnan(x) | np.isnan(y)
    note, usable = missing_note(int(miss.sum()), nan_policy, "paired x, y")
    return x[~miss], y[~miss], note, usable


def scale(*arrays) -> float:
    """The data's scale: the largest absolute finite value over ``arrays``, at least 1.

    Parameters
    ----------
    *arrays : array_like
        The data.

    Returns
    -------
    float

    Examples
    --------
    >>> scale([0.2, -30.0], [np.nan, 4.0]), scale([0.1])
    (30.0, 1.0)
    """
    vals = [np.abs(np.asarray(a, float)[np.isfinite(np.asarray(a, float))]) for a in arrays]
    vals = [v.max() for v in vals if v.size]
    return float(max([1.0, *vals]))


def tolerance(*arrays) -> float:
    """:data:`REL_TOL` times the :func:`scale` of ``arrays``: the largest difference still "equal".

    Parameters
    ----------
    *arrays : array_like
        The data.

    Returns
    -------
    float

    Examples
    --------
    >>> round(tolerance([4.3, 4.0]), 18)
    4.3e-09
    >>> tolerance([0.1, -0.2])  # the scale is at least 1
    1e-09
    """
    return REL_TOL * scale(*arrays)


def is_constant(values, tol: float | None = None) -> bool:
    """True when the finite ``values`` span at most ``tol`` (default: :func:`tolerance` of them):
    the floor's one degeneracy rule, never exact float equality.

    Parameters
    ----------
    values : array_like
        The values; NaN is left out (fewer than 2 finite values count as constant).
    tol : float, optional
        The largest span still constant.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_constant([4.3, 4.0 + 0.3])  # one ulp apart: equal
    True
    >>> is_constant([4.3, 4.3001])
    False
    """
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return True
    return bool(np.ptp(v) <= (tolerance(v) if tol is None else tol))


def negligible(value, scale) -> np.ndarray:
    """Vectorised form of the rule for many estimates at once (e.g. one per bootstrap resample): True
    where ``|value| <= REL_TOL * max(1, |scale|)``, ``scale`` being each estimate's own scale (a
    mean, a mean square).

    Parameters
    ----------
    value : array_like
        The estimates (spreads, SDs).
    scale : array_like
        Each one's scale.

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> negligible(np.array([1e-12, 1e-3]), np.array([4.0, 4.0])).tolist()
    [True, False]
    >>> bool(negligible(5e-7, 1000.0))
    True
    """
    return np.abs(value) <= REL_TOL * np.maximum(1.0, np.abs(scale))


def is_zero_spread(variance: float, tol: float) -> bool:
    """True when a variance (or mean square) is zero within the tolerance: sqrt(variance) <= tol (a
    non-finite variance counts as zero: nothing to compare).

    Parameters
    ----------
    variance : float
        The variance.
    tol : float
        The tolerance (:func:`tolerance` of the data).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_zero_spread(1e-20, 1e-9), is_zero_spread(1e-6, 1e-9), is_zero_spread(float("nan"), 1e-9)
    (True, False, True)
    """
    return bool(not np.isfinite(variance) or np.sqrt(max(float(variance), 0.0)) <= tol)


def snap(values, tol: float | None = None) -> np.ndarray:
    """``values`` rounded to multiples of ``tol`` (default: :func:`tolerance` of them), so values equal
    within the tolerance tie when ranked; NaN stays NaN.

    Parameters
    ----------
    values : array_like
        The values.
    tol : float, optional
        The grid step.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> a, b = snap([0.3, 0.1 + 0.2])
    >>> bool(a == b), 0.3 == 0.1 + 0.2
    (True, False)
    """
    v = np.asarray(values, float)
    step = tolerance(v) if tol is None else tol
    return np.round(v / step) * step


def paired_problem(d: np.ndarray, minimum: int = MIN_PAIRED, tol: float | None = None) -> str:
    """The rules' note for paired differences ``d`` that cannot give a test or d_z, or "".

    Parameters
    ----------
    d : numpy.ndarray
        The differences x - y.
    minimum : int
        The least number of pairs.
    tol : float, optional
        The tolerance of the paired *scores* (:func:`tolerance` of x and y; default: of d).

    Returns
    -------
    str

    Examples
    --------
    >>> paired_problem(np.array([0.0, 0.0])), paired_problem(np.array([1.0, 1.0])), paired_problem(np.array([1.0]))
    ('all differences 0', 'constant differences', '1 pairs < 2')
    """
    if len(d) < minimum:
        return too_few(len(d), minimum, "pairs")
    tol = tolerance(d) if tol is None else tol
    if np.all(np.abs(d) <= tol):
        return "all differences 0"
    if is_constant(d, tol):
        return "constant differences"
    return ""
