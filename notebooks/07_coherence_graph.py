# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 — The coherence landscape and the critical coherence
#
# **Paper** (``002``, sections 2.1, 3.1, 4.1, 4.2). Narratives are extracted from a document
# collection with *Narrative Trails* (German, Keith & North 2025): documents are embedded
# (OpenAI `text-embedding-3-small`, 1536-d), projected by UMAP to 48 dimensions, clustered into
# topics by HDBSCAN with soft membership vectors, and every pair gets the coherence
# θ(u,v) = √(S·T), with S = 1 − arccos(cos(z_u,z_v))/π the angular similarity of the original
# embeddings and T = 1 − JSD of the two membership distributions. The *critical coherence* — the
# weakest edge of the maximum spanning tree, i.e. the largest threshold that keeps the graph
# connected — sparsifies the complete graph; on the news set edges only run forward in time.
#
# **Here.** The news collection comes with the authors' own embeddings, so the landscape can be
# rebuilt exactly as they built it (UMAP `n_neighbors=16`, `min_cluster_size=4`, seed 42, the
# values in the authors' news notebook). VisPub (paper profile only) has no published vectors:
# it is embedded with the bundled all-MiniLM-L6-v2 (384-d) instead of `text-embedding-3-small`
# — a deviation, stated in every VisPub output. The critical coherence is computed from the dense
# matrix with scipy's minimum spanning tree (no networkx complete graph), the sparse result is a
# networkx `DiGraph`.
#
# **Deviations and choices** (written down where they matter):
# - the JSD log base is a parameter. The original used scipy's default natural log, so T never
#   drops below 1 − √ln2 = 0.167; we default to the natural log to compare with the paper, and
#   report what base 2 changes;
# - everything is seeded; the critical coherence is reported over several UMAP seeds, because it
#   moves with the seed.

# %% tags=["parameters"]
# COLLECTIONS: comma-separated subset of the profile's collections (None = all);
# JSD_BASE: None = the profile's ("e"), or 2; SEED: None = the profile's main seed (42);
# SENSITIVITY_SEEDS: None = the profile's number of UMAP seeds for the sensitivity study
PROFILE = "demo"
COLLECTIONS = None
JSD_BASE = None
SEED = None
SENSITIVITY_SEEDS = None

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from judgelab import profiles, reporting
from judgelab.narrative import interim, runs
from judgelab.narrative.coherence import offdiagonal
from judgelab.narrative.graph import coherence_digraph, graph_summary
from judgelab.narrative.landscape import project_2d
from judgelab.narrative.math_paper_values import AUTHORS_CRITICAL_NEWS, AUTHORS_CRITICAL_SOURCE
from judgelab.narrative.settings import NARR_PROFILES

knobs = profiles.pick(NARR_PROFILES, PROFILE)
seed = int(SEED if SEED is not None else knobs["seed"])
jsd_base = JSD_BASE if JSD_BASE is not None else knobs["jsd_base"]
names = [c.strip() for c in COLLECTIONS.split(",")] if COLLECTIONS else list(knobs["collections"])
n_sens = int(SENSITIVITY_SEEDS if SENSITIVITY_SEEDS is not None else knobs["sensitivity_seeds"])
seeds = [seed + i for i in range(n_sens)]
bases = [jsd_base] + [b for b in ("e", 2) if str(b) != str(jsd_base)]
pd.DataFrame({name: knobs["collections"][name] for name in names}).T

# %% [markdown]
# ## Build each landscape, over several UMAP seeds and both JSD bases
#
# One UMAP + HDBSCAN fit per seed; the coherence matrix and its critical value are computed for
# each JSD base from the same fit. The first seed is the main landscape (the one notebook 08's
# `narr_paths.parquet` uses); the first `path_seeds` seeds are kept for notebook 08's averages.

# %%
collections, sensitivity, kept = {}, [], {}
for name in names:
    col = runs.prepare_collection(name, knobs["collections"][name])
    sens, kept[name] = runs.seed_sensitivity(col, knobs["collections"][name], seeds, bases,
                                             keep=knobs["collections"][name].get("path_seeds", knobs["path_seeds"]))
    collections[name] = col
    sensitivity.append(sens)
    print(f"{name}: {len(col)} documents, embeddings {col.embeddings.shape} from {col.embedding_source}")
sensitivity = pd.concat(sensitivity, ignore_index=True)
reporting.save_table(sensitivity, "narr_critical_coherence_seeds")
sensitivity

# %% [markdown]
# ## Critical coherence: ours beside the authors'
#
# The paper does not print the news critical coherence; the authors' news notebook does
# (0.4775, seed 42, natural log). `paper_value` carries it for the main seed in the natural-log
# base; the seed columns show how far the value moves when only UMAP's seed changes.

# %%
summary = runs.critical_summary(sensitivity)
main_rows = sensitivity[sensitivity["seed"] == seed].set_index(["collection", "jsd_base"])["critical"]
summary["critical_main_seed"] = [main_rows.get((c, b), np.nan) for c, b in zip(summary.collection, summary.jsd_base)]
summary["main_seed"] = seed
summary["paper_value"] = [AUTHORS_CRITICAL_NEWS if (c == "news" and b == "e" and len(collections[c]) == 540) else np.nan
                          for c, b in zip(summary.collection, summary.jsd_base)]
summary["paper_source"] = np.where(summary["paper_value"].notna(), AUTHORS_CRITICAL_SOURCE, "")
summary["embedding"] = [collections[c].embedding_source for c in summary.collection]
reporting.save_table(summary, "narr_critical_coherence")
summary

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.6))
for (coll, base), g in sensitivity.groupby(["collection", "jsd_base"], sort=False):
    ax.plot(g["seed"], g["critical"], marker="o", label=f"{coll}, JSD base {base}")
if "news" in collections and len(collections["news"]) == 540:
    ax.axhline(AUTHORS_CRITICAL_NEWS, color="grey", ls="--", lw=1, label="authors' news value (seed 42, ln)")
ax.set_xlabel("UMAP seed")
ax.set_ylabel("critical coherence")
ax.legend(fontsize=7)
ax.set_title("Critical coherence across UMAP seeds")
fig.tight_layout(rect=(0, 0.07, 1, 1))   # room for the caption
reporting.save_figure(fig, "narr_fig_critical_seed_sensitivity",
                      caption=f"Weakest edge of the maximum spanning tree per UMAP seed. {reporting.provenance(PROFILE)}")
plt.show()

# %% [markdown]
# ## What the JSD base changes
#
# With base 2 the Jensen–Shannon distance is the natural-log one divided by √ln2 ≈ 0.833, so every
# topic similarity below 1 falls, most for documents of different topics: the coherence
# distribution widens downward (documents whose membership vectors barely overlap get θ near 0
# instead of a floor near √(0.167·S)) and the critical coherence drops. Since JSD₂ = JSD_e/√ln2
# exactly, the base only rescales the topic distance: pairs with equal S keep their order, pairs
# with different S and T can swap (the Spearman column measures how much the ranking of all pairs
# moves). Paths are then chosen on a scale where cross-topic links weigh less. The table below
# measures this on the main landscape.

# %%
base_effect = pd.concat([runs.jsd_base_effect(collections[n], knobs["collections"][n], kept[n][seed].landscape, bases)
                         for n in names], ignore_index=True)
reporting.save_table(base_effect, "narr_jsd_base_effect")
base_effect.T

# %%
fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 3.4), squeeze=False)
for ax, name in zip(axes[0], names):
    col = collections[name]
    main = kept[name][seed]
    for base in bases:
        run = runs.build_landscape(col, knobs["collections"][name], seed, base, landscape=main.landscape)
        vals = offdiagonal(run.coherence)
        ax.hist(vals, bins=80, alpha=0.5, density=True, label=f"base {base}: critical {run.critical:.3f}")
        ax.axvline(run.critical, ls="--", lw=1, color=ax.patches[-1].get_facecolor())
    ax.set_title(f"{name}: pairwise coherence θ (seed {seed})")
    ax.set_xlabel("θ")
    ax.legend(fontsize=7)
fig.tight_layout(rect=(0, 0.07, 1, 1))   # room for the caption
reporting.save_figure(fig, "narr_fig_coherence_distribution",
                      caption=f"Off-diagonal coherence, natural log vs base 2 in the JSD; dashed = critical coherence. "
                              f"{reporting.provenance(PROFILE)}")
plt.show()

# %% [markdown]
# ## The sparse coherence graph
#
# Edges with θ ≥ critical; on both collections edges run from earlier to later (same date: both
# ways). The result is a networkx `DiGraph`; its size and connectivity below.

# %%
sparsity = []
for name in names:
    main = kept[name][seed]
    g = coherence_digraph(main.coherence, main.critical, collections[name].dates)
    sparsity.append({"collection": name, "seed": seed, "jsd_base": str(jsd_base), "critical": main.critical,
                     **runs.sparsity_row(main.coherence, main.critical, collections[name].dates),
                     **graph_summary(g)})
sparsity = pd.DataFrame(sparsity)
reporting.save_table(sparsity, "narr_graph_sparsity")
sparsity.T

# %% [markdown]
# ## The landscape in two dimensions, coloured by topic
#
# A separate 2-D UMAP of the embeddings (as in the original's plot, `min_dist=0.25`), coloured by
# the main seed's topic (argmax of the membership vector).

# %%
umap2d = {}
for name in names:
    col, main = collections[name], kept[name][seed]
    umap2d[name] = project_2d(col.embeddings, knobs["collections"][name]["n_neighbors"], seed)
    fig, ax = plt.subplots(figsize=(6, 5))
    labels = main.landscape.labels
    sc = ax.scatter(umap2d[name][:, 0], umap2d[name][:, 1], c=labels, cmap="tab20", s=8)
    ax.set_title(f"{name}: {len(col)} documents, {main.landscape.n_topics} topics (seed {seed})")
    ax.set_xticks([]), ax.set_yticks([])
    fig.tight_layout(rect=(0, 0.07, 1, 1))   # room for the caption
    reporting.save_figure(fig, f"narr_fig_landscape_{name}",
                          caption=f"2-D UMAP of the {col.embedding_source} embeddings, colour = HDBSCAN topic. "
                                  f"{reporting.provenance(PROFILE)}")
    plt.show()

# %% [markdown]
# ## Interim files for notebook 08

# %%
for name in names:
    col, main = collections[name], kept[name][seed]
    path_seeds = sorted(kept[name])
    interim.save_documents(col, main.landscape.labels)
    crit_e = sensitivity[(sensitivity.collection == name) & (sensitivity.jsd_base == str(jsd_base))]
    out = interim.save_landscape(
        name, coherence=main.coherence, memberships=main.landscape.memberships, umap2d=umap2d[name],
        critical=main.critical, seeds=np.array(seeds), critical_by_seed=crit_e["critical"].to_numpy(),
        labels=main.landscape.labels, embeddings=col.embeddings, dates=col.dates,
        jsd_base=float(main.jsd_base), main_seed=seed, path_seeds=np.array(path_seeds),
        coherence_by_seed=np.stack([kept[name][s].coherence for s in path_seeds]),
        labels_by_seed=np.stack([kept[name][s].landscape.labels for s in path_seeds]),
        critical_path_seeds=np.array([kept[name][s].critical for s in path_seeds]),
        embedding_source=col.embedding_source,
    )
    print(out)
