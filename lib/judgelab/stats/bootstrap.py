"""The floor's one bootstrap: :func:`bootstrap`, seeded percentile CIs by four resampling schemes
(``method``), every interval under one NaN rule (:func:`percentile_ci`).

=================  ==================================================================  =====================
``method``         what is resampled                                                   used by
=================  ==================================================================  =====================
``"independent"``  each of 1 or 2 samples of independent units on its own                :func:`~judgelab.stats.intervals.mean_ci`,
                   (:func:`scipy.stats.bootstrap`, ``method="percentile"``)            :func:`~judgelab.stats.intervals.diff_ci`
``"paired"``       the rows of equally long arrays together (pairs)                    :func:`~judgelab.stats.correlation.bootstrap_correlation`
``"cluster"``      whole clusters of a DataFrame's rows, optionally within strata      :func:`cluster_bootstrap`
``"weights"``      whole clusters, as integer weights for vectorised statistics        :mod:`judgelab.stats.resampling`
=================  ==================================================================  =====================

**The NaN rule** (one, for every scheme): a resample on which a statistic is undefined (NaN: a
constant side, a missing class) is left out and counted (``n_boot_valid``); the interval is the
((1 - ci)/2, (1 + ci)/2) percentiles of the valid values when at least :data:`MIN_VALID_SHARE` = half
of the B resamples are valid, and NaN with a note otherwise. Why: the valid resamples are those on
which the statistic exists (those that drew both classes, a non-constant side); when they are a
minority their spread describes that minority, not the sampling distribution, and the interval
would look sure of a number the data barely define.

The cluster bootstrap in detail:

When observations are nested in units (a story's two modes, its three layers, its four dimensions;
an endpoint pair's paths) the units, not the rows, are independent. The cluster bootstrap
(Davison & Hinkley 1997, *Bootstrap Methods*, sec. 3.8; Field & Welsh 2007, JRSS B 69:369)
resamples whole clusters with replacement, keeps every row of a drawn cluster, and recomputes the
statistics on each resample; the 95% CI is the (2.5%, 97.5%) percentile interval of the B
recomputed values (Efron & Tibshirani 1993, ch. 13).

- ``strata``: clusters are resampled within each stratum (e.g. stories within category), so every
  resample has the design's group sizes -- the usual bootstrap for a comparison of groups
  (Davison & Hinkley sec. 3.2). Without strata a resample may miss a small group altogether.
- A cluster drawn twice enters twice under distinct ids (column ``cluster`` is rewritten to the
  draw number), so a statistic that pairs rows within a cluster (a story's two modes) pairs them
  within each copy.
- ``statistic(frame) -> {name: value}`` computes all the named statistics of one (re)sample at
  once. A resample where a statistic is NaN (a constant group) is left out of that statistic's
  percentiles and counted: ``n_boot_valid``.
- Reproducible: the draws come from ``numpy.random.default_rng(seed)`` in a fixed order, so the
  result depends only on the data, ``seed`` and ``n_boot``.

The percentile interval is first-order accurate; with few clusters (< ~20) it is too narrow, which
the ``n_clusters`` column lets the reader see.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.stats import rules

BOOT_COLUMNS = ("statistic", "estimate", "ci_low", "ci_high", "ci_level", "ci_method", "unit", "n_clusters",
                "n_boot", "n_boot_valid", "seed", "note")
MIN_CLUSTERS = 2
"""A bootstrap over fewer than 2 clusters only ever redraws the one cluster: no interval."""
MIN_VALID_SHARE = 0.5
"""The NaN rule: an interval needs finite statistics on at least this share of the resamples."""
METHODS = ("independent", "paired", "cluster", "weights")
"""The resampling schemes of :func:`bootstrap` (module docstring). Each gives the percentile
interval, as the four engines it unified did; BCa is not offered (with clusters its jackknife
acceleration would have to run over clusters, which none of the callers needs)."""


@dataclass(frozen=True)
class Interval:
    """A percentile interval of bootstrap values (what :func:`percentile_ci` returns).

    Parameters
    ----------
    low, high : float
        The bounds; NaN when the NaN rule refused the interval.
    n_boot : int
        Resamples (B).
    n_boot_valid : int
        Resamples on which the statistic was finite.

    Examples
    --------
    >>> Interval(0.1, 0.9, 2000, 1990).n_boot_valid
    1990
    """

    low: float
    high: float
    n_boot: int
    n_boot_valid: int


def percentile_ci(values, ci: float = 0.95) -> Interval:
    """The percentile interval of bootstrap values under the floor's one NaN rule.

    The ((1 - ci)/2, (1 + ci)/2) quantiles (linear interpolation, :func:`numpy.quantile`) of the
    finite ``values``; NaN when fewer than :data:`MIN_VALID_SHARE` of them are finite (module
    docstring).

    Parameters
    ----------
    values : array_like
        One statistic per resample (B values; NaN where it was undefined).
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    Interval
        low, high, n_boot (B), n_boot_valid (finite values).

    Examples
    --------
    The 2.5% and 97.5% quantiles of 0, 1, ..., 100 are 2.5 and 97.5:

    >>> iv = percentile_ci(np.arange(101.0))
    >>> round(iv.low, 9), round(iv.high, 9), iv.n_boot, iv.n_boot_valid
    (2.5, 97.5, 101, 101)

    Half the resamples valid is enough; fewer is not:

    >>> percentile_ci([1.0, 2.0, 3.0, np.nan, np.nan, np.nan], ci=0.5)
    Interval(low=1.5, high=2.5, n_boot=6, n_boot_valid=3)
    >>> percentile_ci([1.0, 2.0, np.nan, np.nan, np.nan])
    Interval(low=nan, high=nan, n_boot=5, n_boot_valid=2)
    """
    boot = np.asarray(values, dtype=float)
    ok = boot[np.isfinite(boot)]
    if len(ok) == 0 or len(ok) < MIN_VALID_SHARE * len(boot):
        return Interval(np.nan, np.nan, len(boot), len(ok))
    lo, hi = np.quantile(ok, [(1 - ci) / 2, (1 + ci) / 2])
    return Interval(float(lo), float(hi), len(boot), len(ok))


def too_few_valid(n_valid: int, n_boot: int) -> str:
    """The note of an interval the NaN rule refuses, e.g. "undefined on 70 of 100 resamples (an
    interval needs at least half valid)".

    Parameters
    ----------
    n_valid, n_boot : int
        Valid resamples and all resamples.

    Returns
    -------
    str
        The note.

    Examples
    --------
    >>> too_few_valid(30, 100)
    'undefined on 70 of 100 resamples (an interval needs at least half valid)'
    """
    return f"undefined on {n_boot - n_valid} of {n_boot} resamples (an interval needs at least half valid)"


def bootstrap(data, statistic: Callable, *, method: str = "independent", n_boot: int = 2000, ci: float = 0.95,
              seed: int = 0, cluster: str | None = None, strata: str | None = None, unit: str | None = None,
              batch: int = 500) -> pd.DataFrame:
    """Seeded percentile bootstrap CIs of one or more statistics, by the resampling scheme
    ``method``, under the one NaN rule (module docstring).

    Parameters
    ----------
    data
        ``"independent"``: a tuple of 1-D samples of independent units (each resampled on its own);
        ``"paired"``: a tuple of equally long 1-D arrays (rows resampled together);
        ``"cluster"``: a long DataFrame with the ``cluster`` (and ``strata``) column;
        ``"weights"``: the cluster id of each row.
    statistic : callable
        ``"independent"``: ``statistic(*samples, axis=-1)``, vectorised as for
        :func:`scipy.stats.bootstrap`; ``"paired"``: ``statistic(*arrays)`` of (b, n) resampled
        arrays, one value per row; ``"cluster"``: ``statistic(frame)`` of one (re)sample;
        ``"weights"``: ``statistic(w)`` of (B, n_rows) integer weights (row i's weight = how often
        its cluster was drawn), one value per resample. Each returns either the values of one
        statistic (named "statistic") or a mapping ``{name: values}``.
    method : str
        What is resampled, one of :data:`METHODS` (every one gives the percentile interval).
    n_boot, ci, seed : int, float, int
        Resamples, confidence level, seed of ``numpy.random.default_rng`` (the result depends
        only on the data, these and ``batch``).
    cluster, strata : str, optional
        ``"cluster"``: the column of the independent units and of the groups they are resampled
        within.
    unit : str, optional
        The unit's name in ``unit`` and ``ci_method`` (default ``cluster`` or "unit").
    batch : int
        ``"paired"``: resamples drawn at once (part of the seed's stream: keep it to reproduce).

    Returns
    -------
    pandas.DataFrame
        One row per statistic (:data:`BOOT_COLUMNS`): statistic, estimate (on ``data`` itself),
        ci_low, ci_high, ci_level, ci_method, unit, n_clusters (units resampled), n_boot,
        n_boot_valid, seed, note (why a CI is NaN, or how many resamples were left out).

    Examples
    --------
    A difference of two means whose samples do not overlap: every resampled difference lies
    between the extreme differences 3 - 1 = 2 and 5 - 0 = 5.

    >>> row = bootstrap(([3.0, 4.0, 5.0], [0.0, 1.0]), lambda x, y, axis: np.mean(x, axis) - np.mean(y, axis),
    ...                 n_boot=500).iloc[0]
    >>> float(row["estimate"]), bool(2.0 <= row["ci_low"] <= 3.5 <= row["ci_high"] <= 5.0), int(row["n_boot_valid"])
    (3.5, True, 500)

    A correlation of two pairs of ten: most resamples miss one of them and have a constant side,
    so the NaN rule gives no interval:

    >>> x, y = np.r_[np.zeros(9), 1.0], np.r_[1.0, np.zeros(9)]
    >>> r = bootstrap((x, y), lambda a, b: np.array([np.corrcoef(u, v)[0, 1] if u.std() and v.std() else np.nan
    ...                                             for u, v in zip(a, b)]), method="paired", n_boot=200).iloc[0]
    >>> round(float(r["estimate"]), 4), float(r["ci_low"]), int(r["n_boot_valid"]) < 100
    (-0.1111, nan, True)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), not {ci}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, not {n_boot}")
    engine = {"independent": _independent, "paired": _paired, "cluster": _clusters, "weights": _weights}[method]
    return engine(data, statistic, n_boot=int(n_boot), ci=ci, seed=int(seed), cluster=cluster, strata=strata,
                  unit=unit, batch=batch)


def _named(values) -> dict:
    """A statistic's values as ``{name: values}``."""
    return dict(values) if isinstance(values, Mapping) else {"statistic": values}


def _rows(estimates: dict, boots: dict, ci: float, base: dict) -> pd.DataFrame:
    return rules.frame([_interval(k, float(estimates[k]), np.asarray(boots[k], float), ci, base)
                        for k in estimates], BOOT_COLUMNS)


def _base(method: str, unit: str, n_boot: int, seed: int, ci: float, n_units: int) -> dict:
    return {"ci_level": ci, "ci_method": f"{method} bootstrap over {unit} (percentile, B={n_boot}, seed={seed})",
            "unit": unit, "n_clusters": n_units, "n_boot": n_boot, "seed": seed}


def _independent(data, statistic, *, n_boot, ci, seed, unit, **_) -> pd.DataFrame:
    """Each sample resampled on its own by :func:`scipy.stats.bootstrap` (its draws, seeded)."""
    from scipy import stats

    samples = tuple(np.asarray(d, float) for d in data)
    unit = unit or "unit"
    est = _named(statistic(*samples, axis=-1))
    base = _base("independent", unit, n_boot, seed, ci, sum(len(x) for x in samples))
    if min(len(x) for x in samples) < 2:
        return _rows(est, {k: np.full(n_boot, np.nan) for k in est}, ci, base)
    raw = statistic(*samples, axis=-1)
    fns = ({"statistic": statistic} if not isinstance(raw, Mapping) else
           {k: (lambda *a, axis=-1, _k=k: statistic(*a, axis=axis)[_k]) for k in est})
    boots = {k: stats.bootstrap(samples, fn, n_resamples=n_boot, method="percentile", confidence_level=ci,
                                vectorized=True, random_state=np.random.default_rng(seed)).bootstrap_distribution
             for k, fn in fns.items()}
    return _rows(est, boots, ci, base)


def _paired(data, statistic, *, n_boot, ci, seed, unit, batch, **_) -> pd.DataFrame:
    """The rows of equally long arrays resampled together, ``batch`` resamples at a time."""
    arrays = tuple(np.asarray(d) for d in data)
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError(f"paired bootstrap: arrays of different lengths {[len(a) for a in arrays]}")
    unit = unit or "pair"
    est = {k: np.asarray(v, float).ravel()[0] for k, v in _named(statistic(*(a[None, :] for a in arrays))).items()}
    rng = np.random.default_rng(seed)
    parts = {k: [] for k in est}
    for start in range(0, n_boot if n else 0, batch):
        idx = rng.integers(0, n, size=(min(batch, n_boot - start), n))
        for k, v in _named(statistic(*(a[idx] for a in arrays))).items():
            parts[k].append(np.asarray(v, float))
    boots = {k: np.concatenate(v) if v else np.full(n_boot, np.nan) for k, v in parts.items()}
    return _rows(est, boots, ci, _base("paired", unit, n_boot, seed, ci, n))


def _weights(data, statistic, *, n_boot, ci, seed, unit, **_) -> pd.DataFrame:
    """Whole clusters as integer weights (:func:`cluster_weights`)."""
    ids = np.asarray(data)
    unit = unit or "cluster"
    est = {k: np.asarray(v, float).ravel()[0] for k, v in _named(statistic(np.ones((1, len(ids)), int))).items()}
    w = cluster_weights(ids, n_boot=n_boot, seed=seed)
    boots = _named(statistic(w))
    return _rows(est, boots, ci, _base("cluster (weights)", unit, n_boot, seed, ci, len(np.unique(ids))))


def cluster_weights(clusters: Sequence, n_boot: int = 2000, seed: int = 0) -> np.ndarray:
    """(n_boot, n_rows) integer weights: row i's weight in resample b is how often its cluster was
    drawn when G clusters are drawn with replacement from the G distinct ``clusters`` (seeded,
    ``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    clusters : sequence
        The cluster id of each row.
    n_boot : int
        Resamples, default 2000.
    seed : int
        The seed.

    Returns
    -------
    numpy.ndarray
        (n_boot, n_rows) int64; each resample's cluster weights sum to G.

    Examples
    --------
    Rows of one cluster share its weight, and every resample draws G = 3 clusters:

    >>> w = cluster_weights(["a", "a", "b", "c"], n_boot=5, seed=1)
    >>> w.shape, bool((w[:, 0] == w[:, 1]).all()), (w[:, 1:].sum(axis=1) == 3).all()
    ((5, 4), True, np.True_)
    """
    codes, uniq = _codes(clusters)
    g = len(uniq)
    if g == 0:
        raise ValueError("cluster bootstrap: no clusters (empty data)")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, g, size=(int(n_boot), g))
    counts = np.zeros((int(n_boot), g), dtype=np.int64)
    np.add.at(counts, (np.arange(int(n_boot))[:, None], draws), 1)
    return counts[:, codes]


def _codes(clusters: Sequence) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(list(clusters) if not isinstance(clusters, np.ndarray) else clusters)
    uniq, codes = np.unique(arr.astype(str) if arr.dtype == object else arr, return_inverse=True)
    return codes.ravel(), uniq


def ci_method_label(unit: str, n_boot: int, seed: int, strata: str | None = None) -> str:
    """The ``ci_method`` text of a cluster-bootstrap interval.

    Parameters
    ----------
    unit : str
        The name of the resampled unit.
    n_boot, seed : int
        Resamples and seed.
    strata : str, optional
        The column the units are resampled within.

    Returns
    -------
    str

    Examples
    --------
    >>> ci_method_label("story", 2000, 0, "category")
    'cluster bootstrap over story (percentile, B=2000, seed=0, within category)'
    """
    within = f", within {strata}" if strata else ""
    return f"cluster bootstrap over {unit} (percentile, B={n_boot}, seed={seed}{within})"


def _cluster_rows(data: pd.DataFrame, cluster: str, strata: str | None) -> tuple[list, list[np.ndarray], dict]:
    """Cluster ids, the row positions of each, and the cluster positions of each stratum."""
    rules.require_columns(data, [cluster] + ([strata] if strata else []), "bootstrap data")
    if data[cluster].isna().any():
        raise ValueError(f"bootstrap data: column {cluster!r} has a missing cluster id "
                         f"(row {int(np.flatnonzero(data[cluster].isna().to_numpy())[0])})")
    codes, ids = pd.factorize(data[cluster], sort=True)
    rows = [np.flatnonzero(codes == i) for i in range(len(ids))]
    if strata is None:
        groups = {None: np.arange(len(ids))}
    else:
        first = data.iloc[[r[0] for r in rows]][strata].to_numpy()
        mixed = [ids[i] for i, r in enumerate(rows) if data.iloc[r][strata].nunique(dropna=False) > 1]
        if mixed:
            raise ValueError(f"bootstrap data: cluster {mixed[0]!r} spans several {strata!r} strata")
        groups = {s: np.flatnonzero(first == s) for s in pd.unique(first)}
    return list(ids), rows, groups


def resample_frame(data: pd.DataFrame, cluster: str, draw: np.ndarray, rows: list[np.ndarray],
                   ids: list | None = None) -> pd.DataFrame:
    """The rows of the clusters ``draw`` (positions into the cluster list), each copy under its own id:
    column ``cluster`` becomes the draw number 0..len(draw) - 1, so a cluster drawn twice enters as
    two clusters.

    Parameters
    ----------
    data : pandas.DataFrame
        Long data.
    cluster : str
        The column of the cluster ids.
    draw : numpy.ndarray
        Positions of the drawn clusters in the cluster list.
    rows : list of numpy.ndarray
        The row positions of each cluster.
    ids : list, optional
        Not needed (kept for callers that pass it).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> df = pd.DataFrame({"story": ["a", "a", "b"], "score": [1, 2, 3]})
    >>> resample_frame(df, "story", np.array([1, 1, 0]), [np.array([0, 1]), np.array([2])]).values.tolist()
    [[0, 3], [1, 3], [2, 1], [2, 2]]
    """
    idx = np.concatenate([rows[c] for c in draw]) if len(draw) else np.zeros(0, int)
    sizes = np.fromiter((len(rows[c]) for c in draw), int, count=len(draw))
    out = data.take(idx)
    out[cluster] = np.repeat(np.arange(len(draw)), sizes)
    return out


def cluster_bootstrap(data: pd.DataFrame, statistic: Callable[[pd.DataFrame], Mapping[str, float]], *,
                      cluster: str, strata: str | None = None, n_boot: int = 2000, ci: float = 0.95,
                      seed: int = 0, unit: str | None = None) -> pd.DataFrame:
    """Percentile CIs of the statistics ``statistic(data)`` by resampling ``cluster`` ids:
    :func:`bootstrap` with ``method="cluster"``.

    Parameters
    ----------
    data : pandas.DataFrame
        Long data, one row per observation, with the ``cluster`` (and ``strata``) column.
    statistic : callable
        ``statistic(frame) -> {name: value}``, all the statistics of one (re)sample.
    cluster, strata : str
        The column of the independent units, and of the groups they are resampled within.
    n_boot, ci, seed : int, float, int
        Resamples, confidence level, seed of ``numpy.random.default_rng``.
    unit : str, optional
        The unit's name in ``unit`` and ``ci_method`` (default ``cluster``).

    Returns
    -------
    pandas.DataFrame
        One row per statistic name: statistic, estimate (on ``data`` itself), ci_low, ci_high,
        ci_level, ci_method (:func:`ci_method_label`), unit, n_clusters, n_boot, n_boot_valid,
        seed, note (why a CI is NaN: fewer than 2 clusters, fewer than half the resamples valid
        (:data:`MIN_VALID_SHARE`), the estimate NaN).

    Examples
    --------
    >>> df = pd.DataFrame({"story": [1, 1, 2, 2, 3, 3], "score": [2.0, 2.0, 3.0, 3.0, 4.0, 4.0]})
    >>> row = cluster_bootstrap(df, lambda f: {"mean": f["score"].mean()}, cluster="story", n_boot=200).iloc[0]
    >>> float(row["estimate"]), bool(2.0 <= row["ci_low"] < 3.0 < row["ci_high"] <= 4.0), int(row["n_clusters"])
    (3.0, True, 3)
    """
    return bootstrap(data, statistic, method="cluster", cluster=cluster, strata=strata, n_boot=n_boot, ci=ci,
                     seed=seed, unit=unit)


def _clusters(data: pd.DataFrame, statistic, *, cluster, strata, n_boot, ci, seed, unit, **_) -> pd.DataFrame:
    """Whole clusters of ``data``'s rows drawn with replacement (within strata), one loop."""
    if cluster is None:
        raise ValueError("cluster bootstrap: name the column of the independent units (cluster=...)")
    unit = unit or cluster
    est = {k: float(v) for k, v in dict(statistic(data)).items()}
    base = {"ci_level": ci, "ci_method": ci_method_label(unit, n_boot, seed, strata), "unit": unit,
            "n_boot": int(n_boot), "seed": int(seed)}
    if data.empty:
        return rules.frame([rules.undefined(BOOT_COLUMNS, rules.EMPTY, statistic=k, estimate=v, n_clusters=0,
                                            n_boot_valid=0, **base) for k, v in est.items()], BOOT_COLUMNS)
    ids, rows, groups = _cluster_rows(data, cluster, strata)
    base["n_clusters"] = len(ids)
    if len(ids) < MIN_CLUSTERS:
        note = rules.too_few(len(ids), MIN_CLUSTERS, f"{unit} clusters")
        return rules.frame([rules.undefined(BOOT_COLUMNS, note, statistic=k, estimate=v, n_boot_valid=0, **base)
                            for k, v in est.items()], BOOT_COLUMNS)
    rng = np.random.default_rng(seed)
    boots = {k: np.full(n_boot, np.nan) for k in est}
    for b in range(n_boot):
        draw = np.concatenate([rng.choice(members, size=len(members), replace=True) for members in groups.values()])
        values = statistic(resample_frame(data, cluster, draw, rows))
        for k in est:
            boots[k][b] = float(values.get(k, np.nan))
    return _rows(est, boots, ci, base)


def _interval(name: str, estimate: float, values: np.ndarray, ci: float, base: dict) -> dict:
    """One result row: :func:`percentile_ci` of the bootstrap ``values``, with the note that says
    why there is no interval or how many resamples were left out."""
    iv = percentile_ci(values, ci)
    row = {"statistic": name, "estimate": estimate, **base, "n_boot_valid": iv.n_boot_valid,
           "ci_low": iv.low, "ci_high": iv.high, "note": ""}
    dropped = iv.n_boot - iv.n_boot_valid
    if not np.isfinite(estimate):
        return {**row, "ci_low": np.nan, "ci_high": np.nan, "note": "estimate undefined"}
    if not iv.n_boot_valid:
        return {**row, "note": "no valid resample"}
    if not np.isfinite(iv.low):
        return {**row, "note": too_few_valid(iv.n_boot_valid, iv.n_boot)}
    return {**row, "note": f"{dropped} resample(s) undefined, left out" if dropped else ""}
