"""Follow-up analyses of the narrative judges (paper 002, sections 5.8–5.9, Tables 6–8, Figure 9).

Every function takes tidy DataFrames with the columns of the interim contract
(``narr_paths.parquet``, ``narr_judge_scores.parquet``; CONTRIBUTING.md) and returns a DataFrame
with named columns, in the style of pingouin.

The unit of analysis is one *narrative*: a (collection, pair_id, method) path. Its LLM score in a
mode is the mean over the K agents whose call succeeded (status "ok"); failed calls are never
scored. :func:`narrative_scores` builds this long table once; everything else reads it.

Choices the paper leaves open, stated here:

- Cross-validation folds are drawn over endpoint pairs (both methods of a pair fall in the same
  fold), shuffled with a fixed seed, so a max-capacity path never trains a model that is tested on
  its own random twin (scikit-learn ``GroupKFold`` semantics, shuffled).
- The agents' standard deviation uses ``ddof=1`` (sample SD over the K agents).
- Path efficiency is the straightness index (Benhamou 2004, *J. Theor. Biol.* 229:209–220) of the
  path drawn on the landscape's 2-D UMAP map: straight-line distance source→target divided by the
  summed step lengths (1 = no detour). The paper does not define it.
- The complexity score (Figure 9d) is the mean of the z-scored coherence variance, weak-link ratio
  and (1 − efficiency), within a collection.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .validity import cohens_d

NARRATIVE_KEYS: tuple[str, ...] = ("collection", "pair_id", "method")
FEATURES: tuple[str, ...] = ("min_coherence", "mean_coherence", "length")
"""The predictors of Tables 6–7: minimum coherence, average coherence, path length."""
MODEL_NAMES: tuple[str, ...] = ("linear", "ridge", "random_forest", "polynomial")
SCORE_BINS: tuple[float, ...] = (1.0, 3.0, 5.0, 7.0, 9.0, 10.0)
"""Score-range edges for Table 8's breakdown (the paper names a 5–7 "medium" range)."""
COMPLEXITY_METRICS: tuple[str, ...] = ("coherence_var", "weak_link_ratio", "path_efficiency", "complexity_score")


# --------------------------------------------------------------------------- the long table

def narrative_scores(paths: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """One row per narrative and mode: the path's metrics and its K-agent score summary.

    Columns: the path columns of ``narr_paths`` (collection, pair_id, method, length,
    min_coherence, mean_coherence, ...), ``mode``, ``score_mean`` (mean over successful agents),
    ``score_sd`` (sample SD, ddof=1; NaN with one agent), ``n_agents`` (successful calls) and
    ``n_failed``.
    """
    keys = list(NARRATIVE_KEYS) + ["mode"]
    s = scores.copy()
    s["_ok"] = s["status"].eq("ok") & s["score"].notna()
    ok = s[s["_ok"]]
    agg = ok.groupby(keys)["score"].agg(score_mean="mean", score_sd=lambda x: x.std(ddof=1), n_agents="count")
    failed = s[~s["_ok"]].groupby(keys).size().rename("n_failed")
    summary = agg.join(failed, how="outer").reset_index()
    summary["n_agents"] = summary["n_agents"].fillna(0).astype(int)
    summary["n_failed"] = summary["n_failed"].fillna(0).astype(int)
    path_cols = [c for c in paths.columns if c not in ("titles",)]
    return paths[path_cols].merge(summary, on=list(NARRATIVE_KEYS), how="inner")


def pair_folds(pair_ids: Sequence, n_splits: int = 5, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold splits over the unique endpoint pairs, returned as (train, test) row indices.

    Rows that share a ``pair_id`` fall in the same fold. ``n_splits`` is reduced to the number of
    unique pairs when there are fewer (at least 2 are needed).
    """
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


# --------------------------------------------------------------------------- Table 6 / 7

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


def _groups(df: pd.DataFrame, by: Sequence[str]) -> Iterable[tuple[tuple, pd.DataFrame]]:
    for key, g in df.groupby(list(by), sort=True):
        yield (key if isinstance(key, tuple) else (key,)), g


def predictive_table(long: pd.DataFrame, features: Sequence[str] = FEATURES,
                     models: Sequence[str] = MODEL_NAMES, n_splits: int = 5, seed: int = 0,
                     n_estimators: int = 200) -> pd.DataFrame:
    """Table 6: cross-validated R² (mean ± SD over folds) of each model predicting the mean LLM
    score of a narrative from its mathematical metrics, per collection and mode.

    Columns: collection, mode, model, r2_mean, r2_sd (ddof=1 over folds), n_folds, n.
    """
    rows = []
    for (coll, mode), g in _groups(long.dropna(subset=list(features) + ["score_mean"]), ["collection", "mode"]):
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
    for (coll, mode), g in _groups(long.dropna(subset=list(features) + ["score_mean"]), ["collection", "mode"]):
        if len(g) < 2:
            continue
        rf = make_model("random_forest", seed, n_estimators).fit(g[list(features)].to_numpy(float), g["score_mean"].to_numpy(float))
        for f, imp in zip(features, rf.feature_importances_):
            rows.append({"collection": coll, "mode": mode, "feature": f, "importance": float(imp), "n": int(len(g))})
    return pd.DataFrame(rows, columns=["collection", "mode", "feature", "importance", "n"])


# --------------------------------------------------------------------------- Table 8 by score range
# (Table 8 itself: judgelab.narrative.agreement.agent_disagreement, shown with judge_tables.disagreement_with_paper)

def disagreement_by_score_range(long: pd.DataFrame, bins: Sequence[float] = SCORE_BINS) -> pd.DataFrame:
    """Agent SD by the narrative's mean score range (intervals closed on the left, the last one
    closed on both sides), per collection and mode. Columns: collection, mode, score_range,
    avg_std, n_narratives."""
    d = long[(long["n_agents"] >= 2) & long["score_sd"].notna()].copy()
    labels = [f"{lo:g}-{hi:g}" for lo, hi in zip(bins[:-1], bins[1:])]
    d["score_range"] = pd.cut(d["score_mean"].clip(bins[0], bins[-1]), bins=list(bins), labels=labels,
                              right=False, include_lowest=True)
    d.loc[d["score_mean"] >= bins[-1], "score_range"] = labels[-1]
    out = (d.groupby(["collection", "mode", "score_range"], observed=True)
             .agg(avg_std=("score_sd", "mean"), n_narratives=("score_sd", "size")).reset_index())
    out["score_range"] = out["score_range"].astype(str)
    return out


# --------------------------------------------------------------------------- correlations

def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    m = np.isfinite(x) & np.isfinite(y)
    n = int(m.sum())
    if n < 3 or np.ptp(x[m]) == 0 or np.ptp(y[m]) == 0:
        return np.nan, np.nan, n
    r, p = stats.pearsonr(x[m], y[m])
    return float(r), float(p), n


def correlations(long: pd.DataFrame, predictors: Sequence[str], targets: Sequence[str] = ("score_mean",),
                 by: Sequence[str] = ("collection", "mode")) -> pd.DataFrame:
    """Pearson r (and two-sided p) between each predictor and each target within groups ``by``.

    Columns: *by, predictor, target, r, p, n.
    """
    rows = []
    for key, g in _groups(long, by):
        for pred in predictors:
            for tgt in targets:
                r, p, n = _pearson(g[pred].to_numpy(float), g[tgt].to_numpy(float))
                rows.append({**dict(zip(by, key)), "predictor": pred, "target": tgt, "r": r, "p": p, "n": n})
    return pd.DataFrame(rows, columns=[*by, "predictor", "target", "r", "p", "n"])


SPAN_UNITS: dict[str, tuple[str, float]] = {"news": ("days", 1.0), "vispub": ("years", 365.25)}
"""The paper measures news spans in days and VisPub spans in years (section 5.8.3)."""


def temporal_span(long: pd.DataFrame) -> pd.DataFrame:
    """Add ``temporal_span`` (in the collection's unit, :data:`SPAN_UNITS`) and ``span_unit``."""
    out = long.copy()
    unit = out["collection"].map(lambda c: SPAN_UNITS.get(c, ("days", 1.0))[0])
    div = out["collection"].map(lambda c: SPAN_UNITS.get(c, ("days", 1.0))[1])
    out["temporal_span"] = out["temporal_span_days"].astype(float) / div
    out["span_unit"] = unit
    return out


def temporal_analysis(long: pd.DataFrame) -> pd.DataFrame:
    """Section 5.8.3: Pearson r of temporal span with minimum coherence, average coherence and
    the mean LLM score, per collection and mode (coherence rows repeat per mode, since the
    narratives are the same). Columns: collection, mode, predictor, target, r, p, n, span_unit."""
    t = temporal_span(long)
    out = correlations(t, ["temporal_span"], ["min_coherence", "mean_coherence", "score_mean"])
    units = t.groupby("collection")["span_unit"].first()
    out["span_unit"] = out["collection"].map(units)
    return out


def span_bins(long: pd.DataFrame, n_bins: int = 4) -> pd.DataFrame:
    """Mean minimum coherence and mean LLM score by temporal-span quantile bin, per collection
    and mode (the paper reports an optimum at moderate spans). Columns: collection, mode,
    span_bin, span_lo, span_hi, min_coherence, score_mean, n."""
    t = temporal_span(long)
    rows = []
    for (coll, mode), g in _groups(t.dropna(subset=["temporal_span"]), ["collection", "mode"]):
        q = min(n_bins, g["temporal_span"].nunique())
        if q < 1:
            continue
        bins = pd.qcut(g["temporal_span"], q=q, duplicates="drop")
        for b, gb in g.groupby(bins, observed=True):
            rows.append({"collection": coll, "mode": mode, "span_bin": str(b), "span_lo": float(b.left),
                         "span_hi": float(b.right), "min_coherence": gb["min_coherence"].mean(),
                         "score_mean": gb["score_mean"].mean(), "n": int(len(gb))})
    return pd.DataFrame(rows, columns=["collection", "mode", "span_bin", "span_lo", "span_hi",
                                       "min_coherence", "score_mean", "n"])


# --------------------------------------------------------------------------- complexity

def path_efficiency(path: Sequence[int], coords: np.ndarray) -> float:
    """Straightness index of a path on a map: ‖x_target − x_source‖ / Σ‖x_{i+1} − x_i‖.

    1 for a straight path, towards 0 for a detour (Benhamou 2004). A one-document path, or a path
    whose steps have zero total length, has efficiency 1.
    """
    pts = np.asarray(coords)[np.asarray(path, dtype=int)]
    if len(pts) < 2:
        return 1.0
    steps = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
    if steps == 0:
        return 1.0
    return float(np.linalg.norm(pts[-1] - pts[0]) / steps)


def add_complexity(paths: pd.DataFrame, coords_by_collection: dict[str, np.ndarray]) -> pd.DataFrame:
    """Add ``path_efficiency`` (from each collection's 2-D map) and ``complexity_score`` =
    mean of z(coherence_var), z(weak_link_ratio) and z(1 − path_efficiency) within a collection
    (a z-score with zero SD counts as 0)."""
    out = paths.copy()
    out["path_efficiency"] = [
        path_efficiency(p, coords_by_collection[c]) if c in coords_by_collection else np.nan
        for c, p in zip(out["collection"], out["path"])
    ]

    def z(s: pd.Series) -> pd.Series:
        sd = s.std(ddof=0)
        return (s - s.mean()) / sd if sd and np.isfinite(sd) else s * 0.0

    parts = pd.DataFrame({
        "a": out.groupby("collection")["coherence_var"].transform(z),
        "b": out.groupby("collection")["weak_link_ratio"].transform(z),
        "c": (1 - out["path_efficiency"]).groupby(out["collection"]).transform(z),
    })
    out["complexity_score"] = parts.mean(axis=1, skipna=True)
    return out


def complexity_analysis(long: pd.DataFrame) -> pd.DataFrame:
    """Section 5.8.4: Pearson r of coherence variance, weak-link ratio, path efficiency and the
    complexity score with the mean LLM score, per collection and mode."""
    present = [m for m in COMPLEXITY_METRICS if m in long.columns]
    return correlations(long, present, ["score_mean"])


# --------------------------------------------------------------------------- stability (5.9)

def cv_stability(long: pd.DataFrame, predictors: Sequence[str] = ("min_coherence", "mean_coherence"),
                 n_splits: int = 5, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Section 5.9: stability of the score–coherence correlation and the max-capacity vs random
    effect size over K folds of endpoint pairs.

    Returns ``(folds, summary)``. ``folds`` has one row per collection, mode, fold and quantity:
    for a correlation, r on the training part, r on the held-out fold and |r_train − r_test|; for
    the effect size, Cohen's d (pooled SD) of the score between methods on the held-out fold.
    ``summary`` per collection, mode and quantity: mean_abs_diff (correlations), mean and SD
    (ddof=1) of the held-out values over folds.
    """
    rows = []
    for (coll, mode), g in _groups(long.dropna(subset=["score_mean"]), ["collection", "mode"]):
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
            d = cohens_d(gte.loc[gte["method"] == "maxcap", "score_mean"], gte.loc[gte["method"] == "random", "score_mean"])
            rows.append({"collection": coll, "mode": mode, "fold": k, "quantity": "d_maxcap_vs_random",
                         "train": np.nan, "test": d, "abs_diff": np.nan})
    folds = pd.DataFrame(rows, columns=["collection", "mode", "fold", "quantity", "train", "test", "abs_diff"])
    summary = (folds.groupby(["collection", "mode", "quantity"])
                    .agg(mean_abs_diff=("abs_diff", "mean"), test_mean=("test", "mean"),
                         test_sd=("test", lambda x: x.std(ddof=1)), n_folds=("fold", "nunique"))
                    .reset_index())
    return folds, summary


# --------------------------------------------------------------------------- Figure 9 helpers

def evaluation_errors(long: pd.DataFrame, coherence: str = "min_coherence", score_range: tuple[float, float] = (1.0, 10.0)) -> pd.DataFrame:
    """Figure 9e: error = normalised score − normalised coherence per narrative and mode.

    The score is mapped to [0, 1] by its scale (s − 1)/9; the coherence by min–max within the
    collection. Adds columns ``score_norm``, ``coherence_norm``, ``error``.
    """
    out = long.copy()
    lo, hi = score_range
    out["score_norm"] = (out["score_mean"] - lo) / (hi - lo)
    c = out.groupby("collection")[coherence]
    span = (c.transform("max") - c.transform("min")).replace(0, np.nan)
    out["coherence_norm"] = (out[coherence] - c.transform("min")) / span
    out["error"] = out["score_norm"] - out["coherence_norm"]
    return out


def method_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Figure 9f: mean minimum coherence, mean average coherence and mean LLM score / 10 by
    collection, mode and method."""
    out = (long.groupby(["collection", "mode", "method"])
               .agg(min_coherence=("min_coherence", "mean"), mean_coherence=("mean_coherence", "mean"),
                    score_mean=("score_mean", "mean"), n=("score_mean", "size")).reset_index())
    out["score_scaled"] = out["score_mean"] / 10.0
    return out
