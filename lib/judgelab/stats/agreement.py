"""Agreement among raters of the same items: mean absolute deviation, exact and within-t agreement.

Long data as in :mod:`judgelab.stats.reliability` (``targets``, ``raters``, ``ratings`` columns).
With x_ij the rating of item i by rater j, over the k_i non-missing ratings of item i:

- Mean absolute deviation: MAD = (1/n) sum_i (1/k_i) sum_j |x_ij - mean_i|, over the n items
  with k_i >= 2. An item with one rating has no spread to measure: it does not count (scoring it
  0 would make a failed call look like agreement).
- Pairwise agreement within a tolerance t: the share of rater pairs (j < l), pooled over items,
  with |x_ij - x_il| <= t (t = 0: exact agreement; t = 1: within-1 agreement). Pairs with a
  missing rating do not exist, so an item with one rating contributes none.

Small or degenerate input follows :mod:`judgelab.stats.rules`: no item with 2 ratings -> NaN.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.stats import rules
from judgelab.stats.reliability import rating_matrix

MAD_COLUMNS = ("mad", "n_items", "n_items_excluded", "note")
AGREEMENT_COLUMNS = ("tolerance", "agreement", "n_pairs", "n_items", "note")



def _matrix(data: pd.DataFrame, targets: str, raters: str, ratings: str, nan_policy: str):
    """Items x raters matrix (NaN = no rating) after ``nan_policy`` on NaN ratings in ``data``."""
    rules.check_policy(nan_policy)
    if data.empty:
        return np.empty((0, 0)), "", True
    n_nan = int(pd.to_numeric(data[ratings], errors="coerce").isna().sum()) if ratings in data else 0
    note, usable = rules.missing_note(n_nan, nan_policy, f"column {ratings!r}")
    return rating_matrix(data, targets, raters, ratings).to_numpy(float), note, usable


def _no_pairs_problem(x: np.ndarray) -> str:
    if x.size == 0:
        return rules.EMPTY
    if x.shape[1] < rules.MIN_RATERS:
        return rules.ONE_RATER
    return "no item has 2 ratings"


def mean_absolute_deviation(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
                            nan_policy: str = "omit") -> pd.DataFrame:
    """MAD of the ratings around each item's mean, averaged over items with >= 2 ratings (formula in
    the module docstring).

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings.
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.
    nan_policy : {"omit", "raise", "propagate"}
        Rows whose rating is NaN.

    Returns
    -------
    pandas.DataFrame
        One row: mad, n_items (items counted), n_items_excluded (items with one rating), note.

    Examples
    --------
    Item 1 rated 1 and 3 (MAD 1), item 2 rated 2 and 2 (MAD 0), item 3 rated once (not counted).

    >>> long = pd.DataFrame({"item": [1, 1, 2, 2, 3], "rater": list("ababa"), "score": [1, 3, 2, 2, 5]})
    >>> mean_absolute_deviation(long, "item", "rater", "score")[["mad", "n_items", "n_items_excluded"]].values.tolist()
    [[0.5, 2.0, 1.0]]
    """
    x, note, usable = _matrix(data, targets, raters, ratings, nan_policy)
    counts = (~np.isnan(x)).sum(axis=1) if x.size else np.zeros(0, int)
    rated = counts >= 1
    enough = counts >= 2
    base = {"n_items": int(enough.sum()), "n_items_excluded": int((rated & ~enough).sum())}
    problem = ("" if usable else note) or ("" if enough.any() else _no_pairs_problem(x))
    if problem:
        return rules.frame([rules.undefined(MAD_COLUMNS, rules.join(problem, note), **base)],
                           MAD_COLUMNS)
    y = x[enough]
    per_item = np.nanmean(np.abs(y - np.nanmean(y, axis=1, keepdims=True)), axis=1)
    excluded = f"{base['n_items_excluded']} items with one rating not counted" if base["n_items_excluded"] else ""
    return rules.frame([{"mad": float(per_item.mean()), **base, "note": rules.join(note, excluded)}], MAD_COLUMNS)


def pairwise_agreement(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
                       tolerance: float | Sequence[float] = (0.0, 1.0), nan_policy: str = "omit") -> pd.DataFrame:
    """Share of rater pairs (pooled over items) within ``tolerance`` of each other, one row per
    tolerance (0 = exact agreement, 1 = within-1 agreement).

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings.
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.
    tolerance : float or sequence of float
        The largest difference that still agrees (compared within the rules' tolerance).
    nan_policy : {"omit", "raise", "propagate"}
        Rows whose rating is NaN.

    Returns
    -------
    pandas.DataFrame
        One row per tolerance: tolerance, agreement, n_pairs, n_items (items with >= 2 ratings), note.

    Examples
    --------
    Pairs differing by 2, 0 and 1: exact agreement 1/3, within-1 agreement 2/3.

    >>> long = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "score": [1, 3, 2, 2, 4, 5]})
    >>> pairwise_agreement(long, "item", "rater", "score")[["tolerance", "agreement"]].round(4).values.tolist()
    [[0.0, 0.3333], [1.0, 0.6667]]
    """
    tols = [float(tolerance)] if np.isscalar(tolerance) else [float(t) for t in tolerance]
    x, note, usable = _matrix(data, targets, raters, ratings, nan_policy)
    diffs = []
    if x.size:
        j, l = np.triu_indices(x.shape[1], k=1)
        d = np.abs(x[:, j] - x[:, l])
        diffs = d[~np.isnan(d)]
    n_items = int(((~np.isnan(x)).sum(axis=1) >= 2).sum()) if x.size else 0
    problem = ("" if usable else note) or ("" if len(diffs) else _no_pairs_problem(x))
    rows = []
    for t in tols:
        if problem:
            rows.append(rules.undefined(AGREEMENT_COLUMNS, rules.join(problem, note),
                                        tolerance=t, n_pairs=len(diffs), n_items=n_items))
        else:
            # |x - y| <= t within the rules' tolerance, so 4.3 - 3.3 counts as within 1
            slack = rules.tolerance(x[np.isfinite(x)])
            rows.append({"tolerance": t, "agreement": float(np.mean(diffs <= t + slack)), "n_pairs": len(diffs),
                         "n_items": n_items, "note": note})
    return rules.frame(rows, AGREEMENT_COLUMNS)
