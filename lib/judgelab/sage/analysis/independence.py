"""Testing SAGE's independence hypothesis: do the rule-based layers (L1–L3) predict the LLM-judged
layers (L4–L6), and do they alone tell the story categories apart?

The paper states that "formal textual features and interpretive literary qualities constitute
largely independent dimensions" as "an empirically testable hypothesis" and leaves L1–L3 for
future work (section "Rule-Based Evaluation Layers"). Three tests: feature x score correlations
(FDR and Bonferroni over all pairs), cross-validated R^2 of each score from the features
(independence predicts R^2 near or below 0), and cross-validated category accuracy against chance.
Small inputs never raise: the statistic is NaN and a ``note`` says how many stories are needed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from sklearn.dummy import DummyClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import (KFold, StratifiedKFold, cross_val_predict, cross_val_score,
                                     permutation_test_score)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from judgelab import interim
from judgelab.sage import LAYERS as SCORE_LAYERS
from judgelab.sage.analysis.scores import share_truncated, state_scale_and_truncation
from judgelab.stats.correlation import correlation
from judgelab.stats.tests import adjust

MIN_N_REGRESSION = 10   # at least 2 stories per fold with 5 folds
RIDGE_ALPHAS = np.logspace(-2, 4, 25)


def feature_columns(df: pd.DataFrame, layers: Iterable[str] = ("l1", "l2", "l3")) -> list[str]:
    """The L1–L3 feature columns of ``df`` (prefixes ``l1_``, ``l2_``, ``l3_``), in table order."""
    prefixes = tuple(f"{x.lower()}_" for x in layers)
    return [c for c in df.columns if c.startswith(prefixes)]


def usable_features(df: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """Columns with at least two distinct finite values (all-NaN columns, e.g. the embeddings skipped in
    the smoke profile, and constants carry no information and break scaling)."""
    out = []
    for c in columns:
        v = pd.to_numeric(df[c], errors="coerce")
        v = v[np.isfinite(v)]
        if v.nunique() >= 2:
            out.append(c)
    return out


def l456_scores(summaries: pd.DataFrame | Sequence[pd.DataFrame], mode: str = "content") -> pd.DataFrame:
    """One row per story with its L4, L5, L6 overall scores in one mode (content by default: the
    L1–L3 features are read from the text too), from the ``sage_summary_L*`` frames. Failed
    evaluations are left out; a layer with no usable score is an all-NaN column."""
    if not isinstance(summaries, pd.DataFrame):
        frames = [f for f in summaries if f is not None and len(f)]
        summaries = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["story_id", "layer", "mode", "overall_score"])
    missing = [c for c in ("story_id", "layer", "mode", "overall_score") if c not in summaries.columns]
    if missing:
        raise ValueError(f"summary table lacks column(s) {missing}; it is sage_summary_L*.parquet (CONTRIBUTING.md)")
    s = summaries[summaries["mode"] == mode].copy()
    s["overall_score"] = pd.to_numeric(s["overall_score"], errors="coerce")
    s = s[np.isfinite(s["overall_score"])]
    wide = s.pivot_table(index="story_id", columns="layer", values="overall_score", aggfunc="mean")
    wide = wide.reindex(columns=list(SCORE_LAYERS))
    wide.columns.name = None
    if "truncated" in s.columns:
        # a story's row is "of an excerpt" when any of its layers judged a text cut to head + tail
        cut = s.assign(truncated=s["truncated"].fillna(False).astype(bool)).groupby("story_id")["truncated"].any()
        wide["truncated"] = cut.reindex(wide.index).fillna(False).astype(bool)
    return wide.reset_index()


def join_features_scores(features: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Features and L4–L6 scores side by side for the stories that have both (inner join on story_id)."""
    return features.merge(scores, on="story_id", how="inner", validate="one_to_one")


@dataclass
class IndependenceData:
    """L1–L3 ``features``, L4–L6 ``scores`` per story (:func:`l456_scores`), the stories with
    both (``joined``), and ``notes`` on what is missing."""

    features: pd.DataFrame
    scores: pd.DataFrame
    joined: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def feature_names(self) -> list[str]:
        """The L1–L3 feature columns (:func:`feature_columns`)."""
        return feature_columns(self.features)

    def description(self, profile: str) -> str:
        """Markdown: the notes, how many stories each side covers, and a warning when too few
        stories have both for the tests (fewer than ``MIN_N_REGRESSION``)."""
        lines = [f"- {n}" for n in self.notes]
        lines.append(f"- L1-L3 features for {len(self.features)} stories; L4-L6 content-mode scores for "
                     f"{len(self.scores)}; both for {len(self.joined)}.")
        text = "\n".join(lines)
        if len(self.joined) < MIN_N_REGRESSION:
            text += (f"\n\n> **Only {len(self.joined)} stories have both L1–L3 features and L4–L6 scores in profile "
                     f"`{profile}`.** The tables below are computed but mostly empty (each row's `note` says why); "
                     f"the independence test needs at least {MIN_N_REGRESSION} judged stories (the `paper` profile "
                     "judges 100).")
        return text


def load_independence_data(mode: str = "content", directory: Path | None = None) -> IndependenceData:
    """``sage_l123_features`` and the ``sage_summary_<layer>`` files joined per story; a missing
    layer is left out with a note (the category test needs no LLM score)."""
    from judgelab.sage.analysis.evaluations import load_summaries
    from judgelab.sage.analysis.scores import SageStatsError

    features = interim.read("sage_l123_features", directory)
    notes = []
    try:
        summaries, missing = load_summaries(SCORE_LAYERS, directory)
    except SageStatsError as exc:
        notes.append(str(exc))
        summaries, missing = [], list(SCORE_LAYERS)
    if missing:
        notes.append(f"No summary for {', '.join(missing)}: run notebooks 02-04 first; those layers are left out.")
    scores = l456_scores(summaries, mode=mode)
    return IndependenceData(features, scores, join_features_scores(features, scores), notes)


def correlation_summary(correlations: pd.DataFrame) -> str:
    """One sentence on :func:`feature_score_correlations`' output: how many tests, and how many
    survive each correction; or why none could be computed."""
    n_tests = int(correlations["n_tests"].max()) if len(correlations) else 0
    if not n_tests:
        return "No correlation could be computed: " + (correlations["note"].iloc[0] if len(correlations)
                                                        else "no features")
    return (f"{n_tests} feature x score tests; significant after FDR-BH: {int(correlations['reject_fdr_bh'].sum())}, "
            f"after Bonferroni: {int(correlations['reject_bonferroni'].sum())} (alpha = 0.05).")


def first_note(table: pd.DataFrame) -> str:
    """The first non-empty ``note`` of a result table ("" when there is none)."""
    if "note" not in table:
        return ""
    notes = table["note"].dropna().astype(str)
    notes = notes[notes != ""]
    return notes.iloc[0] if len(notes) else ""


def arc_story_ids(features: pd.DataFrame, per_category: int = 3) -> list[str]:
    """The first ``per_category`` stories of each category, in table order (the stories whose
    emotional arcs notebook 06 draws: ones with L1–L3 features)."""
    return features.groupby("category", sort=False).head(per_category)["story_id"].tolist()


def feature_score_correlations(data: pd.DataFrame, features: Sequence[str] | None = None,
                               scores: Sequence[str] = SCORE_LAYERS, method: str = "spearman",
                               alpha: float = 0.05) -> pd.DataFrame:
    """Correlation (Spearman by default) of every feature with every score on the stories where
    both are finite, with Benjamini-Hochberg FDR and Bonferroni over all pairs with a p-value and
    ``reject_*`` at ``alpha``; sorted by |r|, largest first."""
    features = list(features) if features is not None else feature_columns(data)
    rows = []
    for f in features:
        for s in scores:
            if s not in data:
                rows.append({"feature": f, "feature_layer": f.split("_", 1)[0].upper(), "score": s,
                             "method": method, "n": 0, "r": math.nan, "p": math.nan, "note": f"no {s} scores"})
                continue
            sub = data[[f, s]].apply(pd.to_numeric, errors="coerce")
            res = correlation(sub[f], sub[s], method=method).iloc[0]
            both = data[np.isfinite(sub[f]) & np.isfinite(sub[s])]
            rows.append({"feature": f, "feature_layer": f.split("_", 1)[0].upper(), "score": s,
                         "method": method, "n": int(res["n"]), "r": res["r"], "p": res["p"],
                         "share_truncated": share_truncated(both, keys=()),
                         "note": "" if np.isfinite(res["r"]) else res["note"]})
    out = pd.DataFrame(rows, columns=["feature", "feature_layer", "score", "method", "n", "r", "p",
                                      "share_truncated", "note"])
    out["p_fdr_bh"] = adjust(out["p"], method="fdr_bh")
    out["p_bonferroni"] = adjust(out["p"], method="bonferroni")
    m = int(out["p"].notna().sum())
    out["reject_fdr_bh"] = out["p_fdr_bh"] < alpha
    out["reject_bonferroni"] = out["p_bonferroni"] < alpha
    out["n_tests"] = m
    out = out.iloc[out["r"].abs().fillna(-1).sort_values(ascending=False, kind="stable").index]
    out = out[["feature", "feature_layer", "score", "method", "n", "r", "p", "p_fdr_bh", "p_bonferroni",
               "reject_fdr_bh", "reject_bonferroni", "n_tests", "share_truncated", "note"]]
    return state_scale_and_truncation(out.reset_index(drop=True))


def _regressor():
    # Median imputation: a feature undefined for one story (too short for a window) should not drop
    # the story; scaling makes the ridge penalty treat features alike; RidgeCV picks the penalty by
    # efficient leave-one-out inside each training fold, so the outer folds stay untouched.
    return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), RidgeCV(alphas=RIDGE_ALPHAS))


def _single_thread(fn):
    """Run ``fn`` with BLAS/OpenMP on one thread: on tiny matrices (100 stories x ~50 features)
    thread synchronisation made each logistic regression ~8x slower on a shared 2-core machine."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1):
            return fn(*args, **kwargs)
    return wrapper


@_single_thread
def predict_scores_cv(data: pd.DataFrame, features: Sequence[str] | None = None,
                      scores: Sequence[str] = SCORE_LAYERS, n_splits: int = 5, seed: int = 0) -> pd.DataFrame:
    """How much of each L4–L6 score the L1–L3 features predict out of sample: ridge regression,
    seeded K-fold CV. ``cv_r2`` = 1 - SS_res / SS_tot over the pooled out-of-fold predictions
    (<= 0: no better than the mean, the independence hypothesis); also R^2 per fold."""
    features = list(features) if features is not None else feature_columns(data)
    rows = []
    for s in scores:
        sub = data[np.isfinite(pd.to_numeric(data[s], errors="coerce"))] if s in data else data.iloc[0:0]
        feats = usable_features(sub, features) if len(sub) else []
        row = {"score": s, "n": len(sub), "n_features": len(feats), "n_splits": math.nan, "cv_r2": math.nan,
               "cv_r2_fold_mean": math.nan, "cv_r2_fold_sd": math.nan,
               "share_truncated": share_truncated(sub, keys=()),
               "note": ""}
        if len(sub) < MIN_N_REGRESSION:
            row["note"] = f"n={len(sub)} stories with a {s} score; cross-validated R^2 needs >= {MIN_N_REGRESSION}"
        elif sub[s].nunique() < 2:
            row["note"] = f"{s} is constant"
        elif not feats:
            row["note"] = "no feature varies across these stories"
        else:
            k = min(n_splits, len(sub) // 2)
            cv = KFold(n_splits=k, shuffle=True, random_state=seed)
            X, y = sub[feats].to_numpy(float), sub[s].to_numpy(float)
            pred = cross_val_predict(_regressor(), X, y, cv=cv)
            fold = cross_val_score(_regressor(), X, y, cv=cv, scoring="r2")
            row.update(n_splits=k, cv_r2=float(1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)),
                       cv_r2_fold_mean=float(fold.mean()), cv_r2_fold_sd=float(fold.std()))
        rows.append(row)
    out = pd.DataFrame(rows)
    out["n_splits"] = out["n_splits"].astype("Int64")  # NaN when not run; an integer otherwise
    return state_scale_and_truncation(out)


def _classifier(seed: int):
    return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(),
                         LogisticRegression(max_iter=2000, C=1.0, random_state=seed))


@_single_thread
def classify_category_cv(features_df: pd.DataFrame, feature_sets: dict[str, Sequence[str]] | None = None,
                         target: str = "category", n_splits: int = 5, seed: int = 0,
                         n_permutations: int = 200) -> pd.DataFrame:
    """Do the L1–L3 features alone tell the categories apart? Per feature set (all, each layer):
    logistic regression, stratified K-fold, accuracy, balanced accuracy and the label-permutation p
    (Ojala & Garriga 2010); two chance rows (majority class, stratified guessing) cross-validated
    alike. ``n_permutations=0`` skips the permutation test."""
    if feature_sets is None:
        allf = feature_columns(features_df)
        feature_sets = {"L1-L3": allf, **{layer.upper(): feature_columns(features_df, [layer])
                                          for layer in ("l1", "l2", "l3")}}
    y = features_df[target].astype(str).to_numpy()
    classes, counts = np.unique(y, return_counts=True)
    cols = ["model", "features", "n", "n_classes", "n_features", "n_splits", "accuracy", "balanced_accuracy",
            "perm_p", "note"]
    base = {"n": len(y), "n_classes": len(classes)}
    if len(classes) < 2 or counts.min() < 2:
        note = (f"n={len(y)} stories in {len(classes)} categories (smallest has {counts.min() if len(counts) else 0}); "
                "classification needs >= 2 categories with >= 2 stories each")
        rows = [{"model": m, "features": f, **base, "n_features": len(fs) if f != "-" else 0, "note": note}
                for m, f, fs in [("logistic_regression", k, v) for k, v in feature_sets.items()]
                + [("chance_majority", "-", []), ("chance_stratified", "-", [])]]
        return pd.DataFrame(rows).reindex(columns=cols)
    k = int(min(n_splits, counts.min()))
    cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    rows = []
    for name, fs in feature_sets.items():
        fs = usable_features(features_df, fs)
        row = {"model": "logistic_regression", "features": name, **base, "n_features": len(fs), "n_splits": k}
        if not fs:
            rows.append({**row, "note": "no feature varies across these stories"})
            continue
        X = features_df[fs].to_numpy(float)
        if n_permutations > 0:
            acc, _, p = permutation_test_score(_classifier(seed), X, y, cv=cv, scoring="accuracy",
                                               n_permutations=n_permutations, random_state=seed)
        else:  # no permutation test requested (the smoke profile): accuracy alone
            acc, p = cross_val_score(_classifier(seed), X, y, cv=cv, scoring="accuracy").mean(), math.nan
        bal = cross_val_score(_classifier(seed), X, y, cv=cv, scoring="balanced_accuracy")
        rows.append({**row, "accuracy": float(acc), "balanced_accuracy": float(bal.mean()),
                     "perm_p": float(p), "note": ""})
    X0 = np.zeros((len(y), 1))
    for name, strategy in (("chance_majority", "most_frequent"), ("chance_stratified", "stratified")):
        clf = DummyClassifier(strategy=strategy, random_state=seed)
        acc = cross_val_score(clf, X0, y, cv=cv, scoring="accuracy")
        bal = cross_val_score(clf, X0, y, cv=cv, scoring="balanced_accuracy")
        rows.append({"model": name, "features": "-", **base, "n_features": 0, "n_splits": k,
                     "accuracy": float(acc.mean()), "balanced_accuracy": float(bal.mean()), "note": ""})
    out = pd.DataFrame(rows).reindex(columns=cols)
    out["n_splits"] = out["n_splits"].astype("Int64")
    return out


def emotional_arcs(corpus_df: pd.DataFrame, per_category: int = 3, points: int = 100,
                   story_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """Smoothed emotional arcs (:func:`judgelab.sage.layers.l2_structure.emotional_arc`) of
    ``story_ids``, else the first ``per_category`` of each category; long format (t in [0, 1])."""
    from judgelab.sage.layers.l2_structure import emotional_arc

    if story_ids is not None:
        chosen = corpus_df[corpus_df["story_id"].isin(list(story_ids))]
    else:
        chosen = corpus_df.groupby("category", sort=False, group_keys=False).head(per_category)
    frames = []
    t = np.linspace(0.0, 1.0, points)
    for _, row in chosen.iterrows():
        arc = emotional_arc(str(row["text"]), points=points)
        frames.append(pd.DataFrame({"story_id": row["story_id"], "category": row["category"],
                                    "title": row.get("title", row["story_id"]), "t": t, "sentiment": arc}))
    if not frames:
        return pd.DataFrame(columns=["story_id", "category", "title", "t", "sentiment"])
    return pd.concat(frames, ignore_index=True)


def plot_emotional_arcs(arcs: pd.DataFrame, categories: Sequence[str] = ("canonical", "pulp", "llm")):
    """One panel per category, one line per story (VADER sentence sentiment, DCT-smoothed); each
    panel's legend (story titles) sits under it, off the lines."""
    from judgelab import style

    present = [c for c in categories if c in set(arcs["category"])] or ["(none)"]
    fig, axes = style.subplots(len(present), width=4.2, height=3.4, sharey=True)
    for ax, cat in zip(axes[0], present):
        sub = arcs[arcs["category"] == cat]
        for k, ((_, title), g) in enumerate(sub.groupby(["story_id", "title"], sort=False)):
            ax.plot(g["t"], g["sentiment"], lw=1.6, color=style.colour(k), label=str(title)[:34])
        ax.axhline(0.0, color=style.GREY, lw=0.8, ls=":")
        ax.set_title(style.CATEGORY_LABELS.get(cat, cat))
        ax.set_xlabel("narrative time")
        if not len(sub):
            style.empty_panel(ax, "no stories")
    axes[0][0].set_ylabel("sentiment (VADER, smoothed)")
    for ax in axes[0]:
        style.legend_below(ax, fontsize=style.SMALL_SIZE - 1)
    return fig
