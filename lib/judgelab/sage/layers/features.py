"""All rule-based SAGE features (layers L1–L3) of a corpus: the table ``sage_l123_features``
(``story_id``, ``category``, then the float columns of :data:`FEATURE_COLUMNS`), deterministic and
offline. ``[<profile>.sage_features]`` may draw fewer stories (as notebooks 02–04 draw theirs)
and skip the MiniLM embeddings (their two columns NaN).
"""
from __future__ import annotations

import pandas as pd

from judgelab import profiles
from judgelab.sage.layers.l1_lexical import l1_features
from judgelab.sage.layers.l2_structure import l2_features
from judgelab.sage.layers.l3_thematic import l3_features
from judgelab.sage.layers.segment import segment

FEATURE_COLUMNS = [
    # L1 lexical quality
    "l1_mtld", "l1_mattr", "l1_hdd",
    "l1_flesch_reading_ease", "l1_flesch_kincaid_grade", "l1_gunning_fog", "l1_dale_chall",
    "l1_syllables_per_word", "l1_chars_per_word", "l1_nominalizations_per_100w",
    "l1_sentence_len_mean", "l1_sentence_len_sd", "l1_sentence_len_cv",
    "l1_pos_noun", "l1_pos_verb", "l1_pos_adj", "l1_pos_adv", "l1_pos_pron", "l1_lexical_density",
    "l1_clauses_per_sentence", "l1_subordination_per_sentence",
    "l1_question_rate", "l1_exclamation_rate", "l1_similes_per_1k", "l1_anaphora_rate",
    "l1_trigram_repetition",
    # L2 narrative structure
    "l2_grid_xx", "l2_grid_x_", "l2_grid__x", "l2_entity_continuity", "l2_entity_overlap",
    "l2_entities_per_1k",
    "l2_sentiment_mean", "l2_sentiment_sd", "l2_negative_share", "l2_arc_volatility", "l2_arc_range",
    "l2_arc_net_change", "l2_arc_min_pos", "l2_arc_max_pos", "l2_arc_turns",
    "l2_past_share", "l2_tense_shift_rate", "l2_temporal_connectives_per_1k", "l2_dialogue_share",
    # L3 thematic content
    "l3_topic_entropy", "l3_topic_passage_entropy", "l3_topic_shift",
    "l3_net_density", "l3_net_clustering", "l3_net_modularity", "l3_net_communities",
    "l3_embed_spread", "l3_embed_adjacent_sim",
]


def story_features(text: str, embed: bool = True, embedder=None) -> dict[str, float]:
    """The L1–L3 features of one story's text, segmented and tagged once for all three layers."""
    seg = segment(text)
    out: dict[str, float] = {}
    out.update(l1_features(seg))
    out.update(l2_features(seg))
    out.update(l3_features(seg, embed=embed, embedder=embedder))
    missing = set(FEATURE_COLUMNS) - set(out)
    extra = set(out) - set(FEATURE_COLUMNS)
    if missing or extra:  # a layer module and FEATURE_COLUMNS disagree: a programming error
        raise RuntimeError(f"feature columns out of sync: missing {sorted(missing)}, extra {sorted(extra)}")
    return out


def select_stories(corpus_df: pd.DataFrame, max_per_category: int | None, seed: int | None = None) -> pd.DataFrame:
    """All stories, else ``max_per_category`` per category drawn exactly as notebooks 02–04 draw
    theirs (:func:`judgelab.sage.protocol.runner.select_stories`): a prefix of the same ranking,
    so that notebook 06 can join the features with the judged stories."""
    if max_per_category is None:
        return corpus_df
    from judgelab.sage.protocol.runner import select_stories as sage_select
    from judgelab.sage import CATEGORIES

    if seed is None:
        seed = profiles.resolved("sage", "smoke")[0]["selection_seed"]
    return sage_select(corpus_df, {c: max_per_category for c in CATEGORIES}, seed=seed)


def compute_l123_features(corpus_df: pd.DataFrame, embed: bool = True, embedder=None,
                          max_per_category: int | None = None, profile=None) -> pd.DataFrame:
    """One row per story of ``corpus_df``: ``story_id``, ``category`` and :data:`FEATURE_COLUMNS`;
    ``profile``, when given (the run's configuration, :func:`judgelab.config.of`), sets ``embed``,
    ``max_per_category`` and the selection seed."""
    missing = [c for c in ("story_id", "category", "text") if c not in corpus_df.columns]
    if missing:
        raise ValueError(f"corpus table lacks column(s) {missing}; it is corpus.parquet (CONTRIBUTING.md)")
    seed = None
    if profile is not None:
        from judgelab import config

        cfg = config.of(profile)
        knobs = cfg.knobs("sage_features")
        embed, max_per_category = knobs["embed"], knobs["max_per_category"]
        seed = cfg["sage.selection_seed"]
    stories = select_stories(corpus_df, max_per_category, seed=seed)
    rows = []
    for story_id, category, text in zip(stories["story_id"], stories["category"], stories["text"]):
        feats = story_features(str(text), embed=embed, embedder=embedder)
        rows.append({"story_id": story_id, "category": category, **feats})
    out = pd.DataFrame.from_records(rows, columns=["story_id", "category", *FEATURE_COLUMNS])
    out[FEATURE_COLUMNS] = out[FEATURE_COLUMNS].astype(float)
    return out.reset_index(drop=True)


def layer_of(column: str) -> str:
    """``"L1"``, ``"L2"`` or ``"L3"`` for a feature column (from its prefix)."""
    prefix = column.split("_", 1)[0]
    if prefix not in ("l1", "l2", "l3"):
        raise ValueError(f"{column!r} is not an L1–L3 feature column (prefix l1_, l2_ or l3_)")
    return prefix.upper()


def feature_summary(features: pd.DataFrame) -> pd.DataFrame:
    """Mean and SD of every feature by category, long format: feature, layer, category, n, mean, sd."""
    cols = [c for c in features.columns if c[:3] in ("l1_", "l2_", "l3_")]
    long = features.melt(id_vars=["story_id", "category"], value_vars=cols, var_name="feature")
    g = long.groupby(["feature", "category"], sort=False)["value"]
    out = g.agg(n="count", mean="mean", sd="std").reset_index()
    out.insert(1, "layer", out["feature"].map(layer_of))
    order = {c: i for i, c in enumerate(cols)}
    return out.sort_values(["feature", "category"], key=lambda s: s.map(order) if s.name == "feature" else s
                           ).reset_index(drop=True)


def feature_summary_wide(summary: pd.DataFrame, stat: str = "mean") -> pd.DataFrame:
    """:func:`feature_summary` as one row per feature (in :data:`FEATURE_COLUMNS` order) and one
    column per category, holding ``stat`` (``mean``, ``sd`` or ``n``)."""
    wide = summary.pivot(index="feature", columns="category", values=stat)
    return wide.reindex([c for c in FEATURE_COLUMNS if c in wide.index])


def features_preview(features: pd.DataFrame, n_features: int = 12) -> pd.DataFrame:
    """The first ``n_features`` feature columns as rows, one column per story (a reader's glance)."""
    return features.set_index("story_id").drop(columns="category").T.head(n_features)


FEATURES_SHOWN: dict[str, str] = {
    "l1_mtld": "L1 vocabulary richness (MTLD)",
    "l1_flesch_kincaid_grade": "L1 readability (F-K grade)",
    "l1_subordination_per_sentence": "L1 subordination / sentence",
    "l1_similes_per_1k": "L1 similes / 1k words",
    "l2_entity_continuity": "L2 entity continuity",
    "l2_arc_range": "L2 emotional-arc range",
    "l2_dialogue_share": "L2 dialogue share",
    "l2_past_share": "L2 past-tense share",
    "l3_topic_entropy": "L3 topic entropy",
    "l3_net_modularity": "L3 network modularity",
    "l3_net_clustering": "L3 network clustering",
    "l3_embed_spread": "L3 conceptual spread (MiniLM)",
}
"""One to two features per L1–L3 dimension, with their axis titles, for the by-category figure."""


def plot_features_by_category(features: pd.DataFrame, shown: dict[str, str] | None = None, n_cols: int = 4):
    """One panel per feature in ``shown`` (default :data:`FEATURES_SHOWN`): box plot and the stories
    as dots, by category; a feature not computed in this profile gets a panel that says so."""
    import seaborn as sns

    from judgelab import style

    shown = shown or FEATURES_SHOWN
    n_rows = -(-len(shown) // n_cols)
    fig, axes = style.subplots(n_cols, n_rows, width=13 / 4, height=8.5 / 3)
    for ax, (col, label) in zip(axes.ravel(), shown.items()):
        data = features[["category", col]].dropna()
        if len(data):
            order = [c for c in style.CATEGORY_COLOURS if c in set(data["category"])]  # canonical, pulp, llm
            sns.boxplot(data=data, x="category", y=col, order=order, ax=ax, color="#dddddd", fliersize=0)
            with style.fixed_jitter():
                sns.stripplot(data=data, x="category", y=col, order=order, ax=ax, size=3, jitter=0.2, color="#333333")
        else:
            style.empty_panel(ax, "not computed\nin this profile")
            ax.set(xticks=[], yticks=[])
        ax.set(title=label, xlabel="", ylabel="")
        ax.title.set_fontsize(style.FONT_SIZE)
    for ax in axes.ravel()[len(shown):]:
        ax.set_visible(False)
    return fig
