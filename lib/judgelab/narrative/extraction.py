"""Endpoint pairs -> max-capacity and random chronological paths -> the tidy ``narr_paths`` table.

One call per (collection, landscape seed). The columns are the contract of CONTRIBUTING.md
(``narr_paths.parquet``): collection, pair_id, stratum, method (maxcap/random), source, target,
path, titles, length, min_coherence, mean_coherence, reliability, temporal_span_days,
coherence_var, weak_link_ratio, seed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .baseline import random_baselines
from .effects import cohens_d
from .endpoints import candidate_pools, sample_endpoints, sparse_degree
from .path_metrics import path_metrics, pooled_edge_median, weak_link_ratios
from .widest import widest_path

PATH_COLUMNS = ["collection", "pair_id", "stratum", "method", "source", "target", "path", "titles",
                "length", "min_coherence", "mean_coherence", "reliability", "temporal_span_days",
                "coherence_var", "weak_link_ratio", "seed"]


def extract_narratives(collection: str, c: np.ndarray, critical: float, dates: np.ndarray,
                       titles, labels: np.ndarray, embeddings: np.ndarray, n_pairs: int,
                       seed: int, temporal: bool = True, strict_dates: bool = True) -> pd.DataFrame:
    """Sample endpoints (paper 3.2), extract both paths per pair (3.1), measure them (5.2, 5.8.4).

    ``strict_dates``: random-baseline intermediates strictly between the endpoints' dates
    (:mod:`baseline`).
    """
    dates = np.asarray(dates)
    titles = list(titles)
    tdates = dates if temporal else None

    def maxcap(s, t):
        return widest_path(c, s, t, threshold=critical, dates=tdates)[0]

    pools = candidate_pools(labels, dates, sparse_degree(c, critical), embeddings)
    pairs = sample_endpoints(pools, n_pairs, maxcap, seed)
    if pairs.empty:
        raise ValueError(f"{collection}: no endpoint pair with a path")
    lengths = pairs["path"].map(len).to_numpy()
    randoms = random_baselines(list(zip(pairs["source"], pairs["target"])), dates, lengths, seed,
                               pair_ids=pairs["pair_id"].tolist(), strict=strict_dates)
    rows = []
    for method, plist in (("maxcap", pairs["path"].tolist()), ("random", randoms)):
        for rec, path in zip(pairs.itertuples(index=False), plist):
            rows.append({"collection": collection, "pair_id": int(rec.pair_id), "stratum": rec.stratum,
                         "method": method, "source": int(rec.source), "target": int(rec.target),
                         "path": [int(x) for x in path], "titles": [titles[x] for x in path],
                         **path_metrics(path, c, dates), "seed": int(seed)})
    out = pd.DataFrame(rows)
    ref = pooled_edge_median(out["path"].tolist(), c)
    out["weak_link_ratio"] = weak_link_ratios(out["path"].tolist(), c, ref)
    out.attrs.update(pairs.attrs)
    out.attrs["weak_link_reference"] = ref
    return out[PATH_COLUMNS]


def baseline_rule_sensitivity(paths: pd.DataFrame, c: np.ndarray, dates: np.ndarray) -> pd.DataFrame:
    """Redraw the random baseline of one (collection, seed) under both date rules (inclusive and
    strict) with the same seed, and compare each to the max-capacity paths: length gap, mean
    minimum coherence of the random paths, Cohen's d and AUC of the minimum coherence."""
    from sklearn.metrics import roc_auc_score

    mc = paths[paths["method"] == "maxcap"].sort_values("pair_id")
    seed = int(mc["seed"].iloc[0])
    lengths = mc["length"].to_numpy()
    mc_min = mc["min_coherence"].to_numpy(float)
    rows = []
    for strict in (False, True):
        rand = random_baselines(list(zip(mc["source"], mc["target"])), dates, lengths, seed,
                                pair_ids=mc["pair_id"].tolist(), strict=strict)
        r_min = np.array([path_metrics(p, c)["min_coherence"] for p in rand])
        y = np.r_[np.ones(len(mc_min)), np.zeros(len(r_min))]
        rows.append({"collection": mc["collection"].iloc[0], "seed": seed,
                     "baseline_dates": "strict" if strict else "inclusive",
                     "length_gap": float(lengths.mean() - np.mean([len(p) for p in rand])),
                     "random_mean_min_coherence": float(r_min.mean()),
                     "d_min_coherence": cohens_d(mc_min, r_min),
                     "auc_min_coherence": float(roc_auc_score(y, np.r_[mc_min, r_min]))})
    return pd.DataFrame(rows)
