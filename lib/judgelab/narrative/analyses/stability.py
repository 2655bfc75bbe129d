"""Folds over endpoint pairs and the stability of the findings over them (the Narrative paper, sections
5.8.1 and 5.9, Figure 9).

The paper does not say how it split its narratives. Here the folds are drawn over endpoint pairs:
both paths of a pair (max capacity and its random twin) fall in the same fold, so a model is
never tested on the random twin of a path it was trained on (scikit-learn ``GroupKFold``
semantics, with the groups shuffled by a fixed seed through ``KFold``).

Per fold: Pearson r of the mean LLM score with each coherence metric on the training part and on
the held-out part, and Cohen's d (pooled SD) of the score between max-capacity and random paths on
the held-out part. The paper reports mean |r_train − r_test| < 0.05 and SD of d < 0.2.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.analyses.correlations import _pearson
from judgelab.stats.effects import cohens_d

FOLD_COLUMNS = ["collection", "mode", "fold", "quantity", "train", "test", "abs_diff"]


def pair_folds(pair_ids: Sequence, n_splits: int = 5, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold (train, test) row indices over the unique endpoint pairs (``n_splits`` at most their
    number, at least 2 needed); rows that share a ``pair_id`` fall in the same fold."""
    from sklearn.model_selection import KFold

    pair_ids = np.asarray(pair_ids)
    uniq = np.unique(pair_ids)
    k = min(n_splits, len(uniq))
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 endpoint pairs, got {len(uniq)}")
    folds = []
    for tr, te in KFold(n_splits=k, shuffle=True, random_state=seed).split(uniq):
        folds.append((np.flatnonzero(np.isin(pair_ids, uniq[tr])), np.flatnonzero(np.isin(pair_ids, uniq[te]))))
    return folds


def cv_stability(long: pd.DataFrame, predictors: Sequence[str] = ("min_coherence", "mean_coherence"),
                 n_splits: int = 5, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(folds, summary)``: per collection, mode, fold and quantity, r_train, r_test and
    |r_train − r_test| of each ``r_<metric>`` and the held-out ``d_maxcap_vs_random``; their
    summary over folds (mean_abs_diff, test_mean, test_sd with ddof = 1, n_folds)."""
    rows = []
    for (coll, mode), g in long.dropna(subset=["score_mean"]).groupby(["collection", "mode"], sort=True):
        if g["pair_id"].nunique() < 2:
            continue
        g = g.reset_index(drop=True)
        for k, (tr, te) in enumerate(pair_folds(g["pair_id"].to_numpy(), n_splits, seed)):
            gtr, gte = g.iloc[tr], g.iloc[te]
            for pred in predictors:
                r_tr = _pearson(gtr[pred].to_numpy(float), gtr["score_mean"].to_numpy(float))[0]
                r_te = _pearson(gte[pred].to_numpy(float), gte["score_mean"].to_numpy(float))[0]
                rows.append({"collection": coll, "mode": mode, "fold": k, "quantity": f"r_{pred}",
                             "train": r_tr, "test": r_te, "abs_diff": abs(r_tr - r_te)})
            d = cohens_d(gte.loc[gte["method"] == "maxcap", "score_mean"],
                         gte.loc[gte["method"] == "random", "score_mean"])["d"].item()
            rows.append({"collection": coll, "mode": mode, "fold": k, "quantity": "d_maxcap_vs_random",
                         "train": np.nan, "test": d, "abs_diff": np.nan})
    folds = pd.DataFrame(rows, columns=FOLD_COLUMNS)
    summary = (folds.groupby(["collection", "mode", "quantity"])
                    .agg(mean_abs_diff=("abs_diff", "mean"), test_mean=("test", "mean"),
                         test_sd=("test", lambda x: x.std(ddof=1)), n_folds=("fold", "nunique"))
                    .reset_index())
    return folds, summary
