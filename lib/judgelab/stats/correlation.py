"""Correlation of paired data with confidence intervals: Pearson r, Spearman rho, Kendall tau-b.

Point estimates and two-sided p-values: :func:`scipy.stats.pearsonr`, :func:`scipy.stats.spearmanr`
(the Pearson r of the mid-ranks), :func:`scipy.stats.kendalltau` (tau-b,
tau_b = sum_{i<j} sgn(x_i - x_j) sgn(y_i - y_j) / sqrt(n_x n_y), n_x, n_y the untied pairs;
Kendall 1945).

Two kinds of CI, as a row's ``ci_method`` says:

- ``"fisher_z"`` (:func:`correlation`): z = atanh(r), CI = tanh(z -+ z_(1+ci)/2 se) with
  se = 1 / sqrt(n - 3) for Pearson (Fisher 1921), sqrt((1 + rho^2 / 2) / (n - 3)) for Spearman
  (Bonett & Wright 2000, Psychometrika 65:23) and sqrt(0.437 / (n - 4)) for Kendall (Fieller,
  Hartley & Pearson 1957, Biometrika 44:470). Needs ``rules.MIN_CI_PAIRS`` = 4 pairs (Kendall 5).
- ``"bootstrap"`` (:func:`bootstrap_correlation`): the seeded paired percentile bootstrap (Efron &
  Tibshirani 1993, ch. 13): resample the n pairs with replacement B times, recompute the
  statistic with the vectorised :func:`pearson_rows` / :func:`spearman_rows` / :func:`kendall_rows`,
  take the (1 - ci)/2 and (1 + ci)/2 quantiles (:func:`judgelab.stats.bootstrap.bootstrap`,
  ``method="paired"``). Resamples with a constant side have no correlation; they are dropped and
  counted (``n_boot_valid``), and with fewer than half valid there is no interval (the floor's one
  NaN rule).

Pairs with a missing side follow ``nan_policy`` (listwise); fewer than ``rules.MIN_PAIRS`` = 3
pairs or a constant side give NaN with a note (:mod:`judgelab.stats.rules`). A side is constant when
its range is within ``rules.tolerance`` of its scale, and Spearman and Kendall rank the values
snapped to that tolerance (:func:`judgelab.stats.rules.snap`): two scores one ulp apart tie.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats import rules
from judgelab.stats.bootstrap import bootstrap, too_few_valid

METHODS = ("pearson", "spearman", "kendall")
CORR_COLUMNS = ("method", "n", "r", "p", "ci_low", "ci_high", "ci_level", "ci_method", "n_boot", "n_boot_valid",
                "note")
MAX_PAIR_CELLS = 2_000_000
"""Rows x pairs processed at once by :func:`kendall_rows` (bounds its memory to ~50 MB)."""


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    return method


RANKED = ("spearman", "kendall")


def _prepared(method: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x``, ``y`` as the method sees them: snapped to the tolerance grid for the rank methods."""
    if method in RANKED:
        return rules.snap(x), rules.snap(y)
    return x, y


def _scipy(method: str, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    x, y = _prepared(method, x, y)
    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fn(x, y)
    return float(res.statistic), float(res.pvalue)


def _problem(x: np.ndarray, y: np.ndarray) -> str:
    """The rules' note for paired data that cannot give a correlation, or ""."""
    if len(x) < rules.MIN_PAIRS:
        return rules.too_few(len(x), rules.MIN_PAIRS, "pairs")
    const = [name for name, v in (("x", x), ("y", y)) if rules.is_constant(v)]
    return f"constant {' and '.join(const)}" if const else ""


def fisher_z_ci(r, n, method: str = "pearson", ci: float = 0.95) -> tuple:
    """The Fisher-z CI of correlations, vectorised: tanh(atanh(r) -+ z_(1+ci)/2 se), with the
    standard error of ``method`` (module docstring).

    Parameters
    ----------
    r : float or array_like
        Correlations (values of exactly -+1 give the degenerate interval [r, r]).
    n : int or array_like
        Pairs behind each correlation; arrays broadcast.
    method : str
        "pearson" (se = 1 / sqrt(n - 3)), "spearman" (Bonett & Wright 2000) or "kendall" (Fieller,
        Hartley & Pearson 1957).
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(low, high)`` as float arrays; NaN where ``r`` is NaN or ``n`` is below
        ``rules.MIN_CI_PAIRS`` (Kendall: one more).

    Examples
    --------
    r = 0.5 of 28 pairs: z = atanh(0.5) = 0.5493, se = 1 / 5, so tanh(0.5493 -+ 1.96 * 0.2).

    >>> [round(float(v), 4) for v in fisher_z_ci(0.5, 28)]
    [0.156, 0.7358]
    >>> [float(v) for v in fisher_z_ci([0.5, 0.5], [3, 28])[0].round(4)]
    [nan, 0.156]
    """
    _check_method(method)
    r, n = np.asarray(r, float), np.asarray(n, float)
    need = rules.MIN_CI_PAIRS + (method == "kendall")
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "pearson":
            se = 1 / np.sqrt(n - 3)
        elif method == "spearman":
            se = np.sqrt((1 + r ** 2 / 2) / (n - 3))
        else:
            se = np.sqrt(0.437 / (n - 4))
        zc = stats.norm.ppf((1 + ci) / 2)
        z = np.arctanh(np.clip(r, -1, 1))
        lo, hi = np.tanh(z - zc * se), np.tanh(z + zc * se)
    bad = (n < need) | ~np.isfinite(r)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def fisher_ci(r: float, n: int, method: str = "pearson", ci: float = 0.95) -> tuple[float, float]:
    """The Fisher-z CI of one correlation, as floats (:func:`fisher_z_ci`).

    Parameters
    ----------
    r : float
        The correlation.
    n : int
        Pairs behind it.
    method, ci
        As :func:`fisher_z_ci`.

    Returns
    -------
    tuple of float
        ``(low, high)``; NaNs when ``n`` is too small for the standard error or ``r`` is NaN.

    Examples
    --------
    >>> [round(v, 4) for v in fisher_ci(0.5, 28)]
    [0.156, 0.7358]
    >>> fisher_ci(0.5, 3)
    (nan, nan)
    """
    lo, hi = fisher_z_ci(r, n, method, ci)
    return float(lo), float(hi)


def correlation(x, y, *, method: str = "pearson", ci: float = 0.95, nan_policy: str = "omit") -> pd.DataFrame:
    """One correlation with its two-sided p-value and Fisher-z CI, as one row (pingouin's ``corr``
    shape).

    Parameters
    ----------
    x, y : array_like
        Paired values, equally long.
    method : {"pearson", "spearman", "kendall"}
        Pearson r, Spearman rho or Kendall tau-b (scipy; the rank methods on values snapped to the
        rules' tolerance).
    ci : float
        Confidence level of the Fisher-z CI (:func:`fisher_z_ci`), default 0.95.
    nan_policy : {"omit", "raise", "propagate"}
        Pairs missing a side (listwise).

    Returns
    -------
    pandas.DataFrame
        One row: method, n (pairs used), r, p, ci_low, ci_high, ci_level, ci_method ("fisher_z"),
        n_boot, n_boot_valid (NaN here), note. NaN with fewer than 3 pairs or a constant side; the CI
        NaN below 4 pairs (Kendall 5).

    Examples
    --------
    Deviations (-2, -1, 0, 1, 2) and (-2, 0, 1, 0, 1): r = 6 / sqrt(10 * 6) = 0.7746.

    >>> out = correlation([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
    >>> out[["n", "r", "ci_method"]].round(4).values.tolist()
    [[5, 0.7746, 'fisher_z']]
    >>> correlation([1, 2, 3], [1, 1, 1])["note"].iloc[0]
    'constant y'
    """
    _check_method(method)
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), not {ci}")
    x, y, note, usable = rules.paired(x, y, nan_policy)
    base = {"method": method, "n": len(x), "ci_level": ci, "ci_method": "fisher_z"}
    problem = note if not usable else _problem(x, y)
    if problem:
        return rules.frame([rules.undefined(CORR_COLUMNS, rules.join(problem, note), **base)],
                           CORR_COLUMNS)
    r, p = _scipy(method, x, y)
    lo, hi = fisher_ci(r, len(x), method, ci)
    ci_note = "" if np.isfinite(lo) else f"CI needs {rules.MIN_CI_PAIRS + (method == 'kendall')} pairs"
    row = {**base, "r": r, "p": p, "ci_low": lo, "ci_high": hi, "note": rules.join(note, ci_note)}
    return rules.frame([row], CORR_COLUMNS)


# ----------------------------------------------------------------------------- vectorised (bootstrap)

def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two (B, n) arrays (NaN where a row is constant): the vectorised
    statistic of the paired bootstrap.

    Parameters
    ----------
    x, y : array_like
        Arrays of shape (B, n) (a 1-D array is one row).

    Returns
    -------
    numpy.ndarray
        (B,) correlations.

    Examples
    --------
    Row 1: deviations (-1, 0, 1) and (-4/3, -1/3, 5/3), r = 3 / sqrt(2 * 42/9) = 0.9820; row 2 is
    reversed (r = -1); row 3 has a constant side.

    >>> pearson_rows([[1, 2, 3], [1, 2, 3], [1, 2, 3]], [[1, 2, 4], [3, 2, 1], [2, 2, 2]]).round(4).tolist()
    [0.982, -1.0, nan]
    """
    x, y = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(y, float))
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((dx ** 2).sum(axis=1) * (dy ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair of two (B, n) arrays (the Pearson r of the mid-ranks; NaN where
    a row is constant).

    Parameters
    ----------
    x, y : array_like
        Arrays of shape (B, n).

    Returns
    -------
    numpy.ndarray
        (B,) correlations.

    Examples
    --------
    >>> spearman_rows([[1, 2, 3], [1, 2, 3]], [[1, 2, 4], [3, 2, 1]]).tolist()
    [1.0, -1.0]
    """
    return pearson_rows(stats.rankdata(np.atleast_2d(x), axis=1), stats.rankdata(np.atleast_2d(y), axis=1))


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair of two (B, n) arrays (NaN where a row is constant).

    O(B n^2) by sign products over all pairs, done a few rows at a time; above n = 300 each row goes
    to :func:`scipy.stats.kendalltau` (O(n log n)) instead.

    Parameters
    ----------
    x, y : array_like
        Arrays of shape (B, n).

    Returns
    -------
    numpy.ndarray
        (B,) tau-b values.

    Examples
    --------
    (1, 2, 3, 4) against (1, 3, 2, 4): 5 concordant pairs, 1 discordant, tau = 4 / 6.

    >>> kendall_rows(np.array([[1, 2, 3, 4]]), np.array([[1, 3, 2, 4]])).round(4).tolist()
    [0.6667]
    """
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    n = x.shape[1]
    if n > 300:
        return np.array([stats.kendalltau(a, b).statistic if np.ptp(a) and np.ptp(b) else np.nan
                         for a, b in zip(x, y)], dtype=float)
    i, j = np.triu_indices(n, k=1)
    step = max(1, MAX_PAIR_CELLS // max(1, len(i)))
    out = np.empty(x.shape[0])
    for s in range(0, x.shape[0], step):
        sx, sy = np.sign(x[s:s + step, i] - x[s:s + step, j]), np.sign(y[s:s + step, i] - y[s:s + step, j])
        den = np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s:s + step] = np.where(den > 0, (sx * sy).sum(axis=1) / np.where(den > 0, den, 1), np.nan)
    return out


ROW_STATISTICS = {"pearson": pearson_rows, "spearman": spearman_rows, "kendall": kendall_rows}


def bootstrap_correlation(x, y, *, methods: Sequence[str] = ("spearman", "kendall"), n_boot: int = 2000,
                          ci: float = 0.95, seed: int = 0, batch: int = 500,
                          nan_policy: str = "omit") -> pd.DataFrame:
    """Correlations of paired data with seeded percentile-bootstrap CIs, one row per method: the floor's
    one bootstrap with ``method="paired"`` (:func:`judgelab.stats.bootstrap.bootstrap`).

    Every method is computed on the same B resamples (drawn ``batch`` at a time from
    ``numpy.random.default_rng(seed)``), so the result depends only on the data, ``seed``, ``n_boot``
    and ``batch``. Resamples with a constant side are left out and counted; fewer than half valid
    give no interval (the one NaN rule).

    Parameters
    ----------
    x, y : array_like
        Paired values, equally long.
    methods : str or sequence of str
        Any of "pearson", "spearman", "kendall".
    n_boot, ci, seed, batch : int, float, int, int
        Resamples, confidence level, seed, resamples drawn at once.
    nan_policy : {"omit", "raise", "propagate"}
        Pairs missing a side (listwise).

    Returns
    -------
    pandas.DataFrame
        Columns as :func:`correlation`, with ci_method "bootstrap", n_boot and n_boot_valid.

    Examples
    --------
    A perfectly monotone relation: every resample with two distinct x has rho = 1.

    >>> out = bootstrap_correlation([1, 2, 3, 4, 5, 6], [1, 4, 9, 16, 25, 36], methods="spearman", n_boot=200)
    >>> out[["r", "ci_low", "ci_high", "ci_method"]].values.tolist()
    [[1.0, 1.0, 1.0, 'bootstrap']]
    """
    methods = [_check_method(m) for m in ([methods] if isinstance(methods, str) else methods)]
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), not {ci}")
    x, y, note, usable = rules.paired(x, y, nan_policy)
    n = len(x)
    problem = note if not usable else _problem(x, y)
    base = {"n": n, "ci_level": ci, "ci_method": "bootstrap", "n_boot": int(n_boot)}
    if problem:
        rows = [rules.undefined(CORR_COLUMNS, rules.join(problem, note), method=m, **base,
                                n_boot_valid=0) for m in methods]
        return rules.frame(rows, CORR_COLUMNS)
    # the resampled rows of x, y and of their snapped copies (the rank methods' view, snapped once
    # on the whole sample as for the estimate)
    columns = {m: _prepared(m, x, y) for m in methods}

    def statistic(*arrays):
        return {m: ROW_STATISTICS[m](*(arrays[2 * i:2 * i + 2])) for i, m in enumerate(methods)}

    boot = bootstrap(tuple(a for m in methods for a in columns[m]), statistic, method="paired", n_boot=n_boot,
                     ci=ci, seed=seed, batch=batch).set_index("statistic")
    rows = []
    for m in methods:
        b = boot.loc[m]
        r, p = _scipy(m, x, y)
        valid = int(b["n_boot_valid"])
        rule = "no valid resample" if not valid else ("" if np.isfinite(b["ci_low"]) else too_few_valid(valid, n_boot))
        rows.append({"method": m, **base, "r": r, "p": p, "ci_low": float(b["ci_low"]), "ci_high": float(b["ci_high"]),
                     "n_boot_valid": valid, "note": rules.join(note, rule)})
    return rules.frame(rows, CORR_COLUMNS)
