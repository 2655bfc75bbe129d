"""Predicting the LLM score from the coherence metrics (the Narrative paper, section 5.8.1, Tables 6 and 7).

Scikit-learn regressors on the follow-up table; R² = 1 − SS_res / SS_tot on held-out folds of
endpoint pairs (:func:`judgelab.narrative.analyses.stability.pair_folds`). Table 6's interval is
a seeded percentile cluster bootstrap over pairs of the fixed out-of-fold predictions: the models
are not refitted, so it describes the sampling of the evaluated narratives, not the refitting
noise (``r2_sd`` shows the spread over folds).

Table 7's importances carry a seeded percentile cluster bootstrap over endpoint pairs that refits
the forest on every resample (each drawn pair's narratives repeated as often as the pair was drawn,
the forest reseeded per resample), so its interval covers the sampling of the pairs *and* the
forest's own randomness. It describes the spread of the importance a forest fitted on this many
pairs gives; it is not an interval for the importance of the population: impurity importances of
fully grown trees are biased at small n (the noise the trees fit is shared out among the features),
and simulated at the paper's 100 VisPub pairs this interval covers the importance of a very large
sample from the same generator far less often than 95% (docs/claims.md, "Intervals valid at their n").
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.analyses.stability import pair_folds
from judgelab.stats import resampling as rs
from judgelab.stats import rules

UNIT = "endpoint pair"
N_BOOT = 2000

FEATURES: tuple[str, ...] = ("min_coherence", "mean_coherence", "length")
"""The predictors of Tables 6–7: minimum coherence, average coherence, path length."""
MODEL_NAMES: tuple[str, ...] = ("linear", "ridge", "random_forest", "polynomial")


def make_model(name: str, seed: int = 0, n_estimators: int = 200):
    """A fresh scikit-learn regressor: ``linear`` (OLS), ``ridge`` (standardised, α = 1),
    ``random_forest`` (Breiman 2001) or ``polynomial`` (degree 2, standardised, OLS)."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    if name == "linear":
        return LinearRegression()
    if name == "ridge":
        return make_pipeline(StandardScaler(), Ridge(alpha=1.0))
    if name == "random_forest":
        return RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=1)
    if name == "polynomial":
        return make_pipeline(PolynomialFeatures(degree=2, include_bias=False), StandardScaler(), LinearRegression())
    raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_NAMES)}")


def cv_predictions(X: np.ndarray, y: np.ndarray, model_name: str, groups: Sequence | None = None,
                   n_splits: int = 5, seed: int = 0, n_estimators: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold predictions and the fold of each row (folds over ``groups``; rows if None)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    groups = np.arange(len(y)) if groups is None else np.asarray(groups)
    pred, fold = np.full(len(y), np.nan), np.full(len(y), -1)
    for k, (tr, te) in enumerate(pair_folds(groups, n_splits, seed)):
        model = make_model(model_name, seed, n_estimators).fit(X[tr], y[tr])
        pred[te], fold[te] = model.predict(X[te]), k
    return pred, fold


def fold_r2(y: np.ndarray, pred: np.ndarray, fold: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """R² = 1 − SS_res/SS_tot of each fold's held-out rows, rows weighted by ``w`` (B, n; one
    unweighted row when None). Shape (B, n_folds); NaN for a fold with fewer than 2 rows (or
    weight) or a constant target."""
    w = np.ones((1, len(y))) if w is None else np.asarray(w, float)
    out = []
    for k in np.unique(fold[fold >= 0]):
        m = fold == k
        ww, yy, res = w[:, m], y[m], (y - pred)[m]
        n = ww.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            ss_tot = ww @ yy ** 2 - (ww @ yy) ** 2 / n
            r2 = 1 - (ww @ res ** 2) / ss_tot
        ok = (n >= 2) & ((ww > 0).sum(axis=1) >= 2) & ~rules.negligible(ss_tot, (ww @ yy ** 2) / np.maximum(n, 1))
        out.append(np.where(ok, r2, np.nan))
    return np.column_stack(out) if out else np.empty((w.shape[0], 0))


def predictive_table(long: pd.DataFrame, features: Sequence[str] = FEATURES,
                     models: Sequence[str] = MODEL_NAMES, n_splits: int = 5, seed: int = 0,
                     n_estimators: int = 200, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Table 6: per collection, mode and model, the cross-validated R² of the mean LLM score
    from the path's metrics: mean over folds with its pair-bootstrap interval (module doc) and
    ``r2_sd`` (ddof = 1 over folds)."""
    from sklearn.metrics import r2_score

    rows = []
    data = long.dropna(subset=list(features) + ["score_mean"])
    for (coll, mode), g in data.groupby(["collection", "mode"], sort=True):
        if g["pair_id"].nunique() < 2:
            continue
        y, pairs = g["score_mean"].to_numpy(float), g["pair_id"].to_numpy()
        w = rs.cluster_weights(pairs, n_boot, seed)
        for name in models:
            pred, fold = cv_predictions(g[list(features)].to_numpy(), y, name, pairs, n_splits, seed, n_estimators)
            r2 = np.array([r2_score(y[fold == k], pred[fold == k]) if (fold == k).sum() >= 2 else np.nan
                           for k in np.unique(fold)])
            ok = r2[np.isfinite(r2)]
            # the folds the estimate averages; a resample where one of them is undefined is dropped
            boot = fold_r2(y, pred, fold, w)[:, np.isfinite(r2)]
            iv = rs.percentile_interval(boot.mean(axis=1) if boot.shape[1] else np.full(n_boot, np.nan))
            mean = float(ok.mean()) if len(ok) else np.nan
            rows.append({"collection": coll, "mode": mode, "model": name, "r2_mean": mean,
                         "r2_mean_ci_low": iv.low if np.isfinite(mean) else np.nan,
                         "r2_mean_ci_high": iv.high if np.isfinite(mean) else np.nan,
                         "r2_sd": float(ok.std(ddof=1)) if len(ok) > 1 else np.nan,
                         "n_folds": int(len(ok)), "n": int(len(g)), "n_pairs": int(g["pair_id"].nunique())})
    out = pd.DataFrame(rows, columns=["collection", "mode", "model", "r2_mean", "r2_mean_ci_low", "r2_mean_ci_high",
                                      "r2_sd", "n_folds", "n", "n_pairs"])
    out["unit"] = UNIT
    out["ci_method"] = rs.ci_method(n_boot, seed) + "; held-out predictions fixed (models not refitted)"
    return out


IMPORTANCE_BOOT = 200


def forest_importances(X: np.ndarray, y: np.ndarray, seed: int = 0, n_estimators: int = 200) -> np.ndarray:
    """Impurity importances (summing to 1) of one random forest (:func:`make_model`) on ``X``, ``y``."""
    return make_model("random_forest", seed, n_estimators).fit(X, y).feature_importances_


def bootstrap_importances(X: np.ndarray, y: np.ndarray, groups: Sequence, n_boot: int = IMPORTANCE_BOOT,
                          seed: int = 0, n_estimators: int = 200) -> np.ndarray:
    """(n_boot, features): the importances of a forest refitted on each cluster resample of
    ``groups`` (:func:`judgelab.stats.resampling.cluster_weights`: a drawn cluster's rows repeated
    as often as it was drawn), the forest seeded ``seed + 1 + b`` on resample b."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    w = rs.cluster_weights(np.asarray(groups), n_boot, seed).astype(int)
    rows = np.arange(len(y))
    out = np.empty((n_boot, X.shape[1]))
    for b in range(n_boot):
        idx = np.repeat(rows, w[b])
        out[b] = forest_importances(X[idx], y[idx], seed + 1 + b, n_estimators)
    return out


def feature_importance_table(long: pd.DataFrame, features: Sequence[str] = FEATURES, seed: int = 0,
                             n_estimators: int = 200, n_boot: int = IMPORTANCE_BOOT) -> pd.DataFrame:
    """Table 7: impurity-based feature importances (summing to 1) of a random forest fitted on
    all narratives of a collection and mode, with the 95% percentile interval of
    :func:`bootstrap_importances` over endpoint pairs (module doc: what it covers, and what not)."""
    rows = []
    data = long.dropna(subset=list(features) + ["score_mean"])
    for (coll, mode), g in data.groupby(["collection", "mode"], sort=True):
        if len(g) < 2:
            continue
        X, y, pairs = g[list(features)].to_numpy(float), g["score_mean"].to_numpy(float), g["pair_id"].to_numpy()
        point = forest_importances(X, y, seed, n_estimators)
        boot = bootstrap_importances(X, y, pairs, n_boot, seed, n_estimators) if len(np.unique(pairs)) >= 2 else None
        for j, (f, imp) in enumerate(zip(features, point)):
            iv = rs.percentile_interval(boot[:, j]) if boot is not None else None
            rows.append({"collection": coll, "mode": mode, "feature": f, "importance": float(imp),
                         "importance_ci_low": iv.low if iv else np.nan, "importance_ci_high": iv.high if iv else np.nan,
                         "n": int(len(g)), "n_pairs": int(len(np.unique(pairs)))})
    out = pd.DataFrame(rows, columns=["collection", "mode", "feature", "importance", "importance_ci_low",
                                      "importance_ci_high", "n", "n_pairs"])
    out["unit"] = UNIT
    out["ci_method"] = (rs.ci_method(n_boot, seed) + f"; the forest ({n_estimators} trees) refitted on every resample;"
                        " the spread of a forest's importance at this many pairs, not an interval for the"
                        " population's importance (biased at small n: docs/claims.md)")
    return out
