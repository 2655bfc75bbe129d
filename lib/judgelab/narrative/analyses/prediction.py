"""Predicting the LLM score from the coherence metrics (paper 002, section 5.8.1, Tables 6 and 7).

Input: the follow-up table (:func:`judgelab.narrative.analyses.narrative_table.narrative_table`),
one row per judged narrative and mode with ``score_mean`` (the K agents' mean score) and the
path's metrics. Models are scikit-learn regressors; R² = 1 − SS_res / SS_tot on held-out folds
of endpoint pairs (:func:`judgelab.narrative.analyses.folds.pair_folds`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.analyses.folds import pair_folds

FEATURES: tuple[str, ...] = ("min_coherence", "mean_coherence", "length")
"""The predictors of Tables 6–7: minimum coherence, average coherence, path length."""
MODEL_NAMES: tuple[str, ...] = ("linear", "ridge", "random_forest", "polynomial")


def make_model(name: str, seed: int = 0, n_estimators: int = 200):
    """A fresh scikit-learn regressor by name.

    ``linear``: ordinary least squares. ``ridge``: standardised features + Ridge (α = 1).
    ``random_forest``: RandomForestRegressor (Breiman 2001) with ``n_estimators`` trees.
    ``polynomial``: degree-2 polynomial features + standardisation + OLS (the paper's fourth row).
    """
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


def cv_r2(X: np.ndarray, y: np.ndarray, model_name: str, groups: Sequence | None = None,
          n_splits: int = 5, seed: int = 0, n_estimators: int = 200) -> np.ndarray:
    """Out-of-fold R² = 1 − SS_res/SS_tot on each test fold (folds over ``groups``; rows if None)."""
    from sklearn.metrics import r2_score

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    groups = np.arange(len(y)) if groups is None else np.asarray(groups)
    out = []
    for tr, te in pair_folds(groups, n_splits, seed):
        if len(te) < 2:
            out.append(np.nan)  # R² is undefined on one point
            continue
        model = make_model(model_name, seed, n_estimators).fit(X[tr], y[tr])
        out.append(r2_score(y[te], model.predict(X[te])))
    return np.asarray(out)


def predictive_table(long: pd.DataFrame, features: Sequence[str] = FEATURES,
                     models: Sequence[str] = MODEL_NAMES, n_splits: int = 5, seed: int = 0,
                     n_estimators: int = 200) -> pd.DataFrame:
    """Table 6: cross-validated R² (mean ± SD over folds) of each model predicting the mean LLM
    score of a narrative from its mathematical metrics, per collection and mode.

    Columns: collection, mode, model, r2_mean, r2_sd (ddof=1 over folds), n_folds, n.
    """
    rows = []
    data = long.dropna(subset=list(features) + ["score_mean"])
    for (coll, mode), g in data.groupby(["collection", "mode"], sort=True):
        if g["pair_id"].nunique() < 2:
            continue
        for name in models:
            r2 = cv_r2(g[list(features)].to_numpy(), g["score_mean"].to_numpy(), name, g["pair_id"].to_numpy(),
                       n_splits, seed, n_estimators)
            ok = r2[np.isfinite(r2)]
            rows.append({"collection": coll, "mode": mode, "model": name,
                         "r2_mean": float(ok.mean()) if len(ok) else np.nan,
                         "r2_sd": float(ok.std(ddof=1)) if len(ok) > 1 else np.nan,
                         "n_folds": int(len(ok)), "n": int(len(g))})
    return pd.DataFrame(rows, columns=["collection", "mode", "model", "r2_mean", "r2_sd", "n_folds", "n"])


def feature_importance_table(long: pd.DataFrame, features: Sequence[str] = FEATURES, seed: int = 0,
                             n_estimators: int = 200) -> pd.DataFrame:
    """Table 7: impurity-based feature importances (mean decrease in impurity, summing to 1) of a
    random forest fitted on all narratives of a collection and mode.

    Columns: collection, mode, feature, importance, n.
    """
    rows = []
    data = long.dropna(subset=list(features) + ["score_mean"])
    for (coll, mode), g in data.groupby(["collection", "mode"], sort=True):
        if len(g) < 2:
            continue
        rf = make_model("random_forest", seed, n_estimators).fit(g[list(features)].to_numpy(float),
                                                                 g["score_mean"].to_numpy(float))
        for f, imp in zip(features, rf.feature_importances_):
            rows.append({"collection": coll, "mode": mode, "feature": f, "importance": float(imp), "n": int(len(g))})
    return pd.DataFrame(rows, columns=["collection", "mode", "feature", "importance", "n"])
