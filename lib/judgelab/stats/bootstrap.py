"""The seeded cluster bootstrap: percentile CIs for any statistics of clustered data.

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

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from judgelab.stats import rules

BOOT_COLUMNS = ("statistic", "estimate", "ci_low", "ci_high", "ci_level", "ci_method", "unit", "n_clusters",
                "n_boot", "n_boot_valid", "seed", "note")
MIN_CLUSTERS = 2
"""A bootstrap over fewer than 2 clusters only ever redraws the one cluster: no interval."""


def ci_method_label(unit: str, n_boot: int, seed: int, strata: str | None = None) -> str:
    """The ``ci_method`` text of a cluster-bootstrap interval, e.g.
    ``"cluster bootstrap over story (percentile, B=2000, seed=0, within category)"``."""
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
    """The rows of the clusters ``draw`` (positions into the cluster list), each copy under its own
    id: column ``cluster`` becomes the draw number 0..len(draw) - 1 (``ids`` is not needed)."""
    idx = np.concatenate([rows[c] for c in draw]) if len(draw) else np.zeros(0, int)
    sizes = np.fromiter((len(rows[c]) for c in draw), int, count=len(draw))
    out = data.take(idx)
    out[cluster] = np.repeat(np.arange(len(draw)), sizes)
    return out


def cluster_bootstrap(data: pd.DataFrame, statistic: Callable[[pd.DataFrame], Mapping[str, float]], *,
                      cluster: str, strata: str | None = None, n_boot: int = 2000, ci: float = 0.95,
                      seed: int = 0, unit: str | None = None) -> pd.DataFrame:
    """Percentile CIs of the statistics ``statistic(data)`` by resampling ``cluster`` ids.

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
        seed, note (why a CI is NaN: fewer than 2 clusters, no valid resample, the estimate NaN).

    Examples
    --------
    >>> df = pd.DataFrame({"story": [1, 1, 2, 2, 3, 3], "score": [2.0, 2.0, 3.0, 3.0, 4.0, 4.0]})
    >>> row = cluster_bootstrap(df, lambda f: {"mean": f["score"].mean()}, cluster="story", n_boot=200).iloc[0]
    >>> float(row["estimate"]), bool(2.0 <= row["ci_low"] < 3.0 < row["ci_high"] <= 4.0), int(row["n_clusters"])
    (3.0, True, 3)
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), not {ci}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, not {n_boot}")
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
    return rules.frame([_interval(k, est[k], boots[k], ci, base) for k in est], BOOT_COLUMNS)


def _interval(name: str, estimate: float, values: np.ndarray, ci: float, base: dict) -> dict:
    """One result row: the percentile interval of the finite bootstrap ``values``."""
    ok = values[np.isfinite(values)]
    row = {"statistic": name, "estimate": estimate, **base, "n_boot_valid": int(len(ok)), "note": ""}
    if not np.isfinite(estimate):
        return {**row, "ci_low": np.nan, "ci_high": np.nan, "note": "estimate undefined"}
    if not len(ok):
        return {**row, "ci_low": np.nan, "ci_high": np.nan, "note": "no valid resample"}
    lo, hi = np.percentile(ok, [100 * (1 - ci) / 2, 100 * (1 + ci) / 2])
    dropped = len(values) - len(ok)
    note = f"{dropped} resample(s) undefined, left out" if dropped else ""
    return {**row, "ci_low": float(lo), "ci_high": float(hi), "note": note}
