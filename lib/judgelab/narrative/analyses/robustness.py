"""Which news-mathematics findings survive the analyst's choices: the specification grid
(a specification curve / multiverse analysis: Simonsohn, Simmons & Nelson 2020, *Nature Human
Behaviour* 4:1208; Steegen et al. 2016, *Perspectives on Psychological Science* 11:702).

Every combination of the choices the paper leaves open (:data:`CHOICES`) is run through the same
code notebooks 07 and 08 use — :func:`fit_landscape`, :func:`coherence_matrix`,
:func:`critical_coherence`, :func:`extract_narratives` (endpoints, widest paths, random baseline,
metrics), :func:`other_rule_randoms` for the other date rule, and the tables' statistics
(:func:`method_effects`, :func:`path_length_table`, :func:`length_difference`, each with its
cluster bootstrap over endpoint pairs). Nothing here re-implements them.

Work is shared along the grid, from the costliest step down: one UMAP + HDBSCAN fit per
(embedding, parameter set, seed) — the JSD base, the strata and the date rule do not change it; one
coherence matrix per fit and JSD base; one endpoint sample per matrix and strata rule; both date
rules' random paths drawn on the same endpoints (as notebook 08's sensitivity row). The seed is
notebook 08's: UMAP seed = sampling seed = baseline seed; every bootstrap uses the main seed, as
notebook 08's tables do, so the main specification reproduces Tables 1 and 4 exactly.

Each claim of the register (``judgelab.claims``) whose numbers come from the news rows of Table 1
or 4 gets, per specification, its estimate, interval and p from the same columns the scorecard
reads, and its verdict from :func:`judgelab.claims.verdicts.decide` with the claim's own rule and
margin. A claim is **robust** when every defensible specification reproduces it, **fragile** when
some reproduce it and others decide against it (:func:`claims_robustness` names the other cases:
reproduced under none, too wide to tell); :data:`CHOICES` says which values are defensible and why (a value that is not the
paper's design — MiniLM instead of the authors' embeddings, endpoints without strata — is run and
shown, and left out of the label).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd

from judgelab import config
from judgelab.claims import design, register, verdicts
from judgelab.narrative.landscape import projection
from judgelab.narrative.landscape.coherence import coherence_matrix
from judgelab.narrative.landscape.graph import critical_coherence
from judgelab.narrative.paths.comparison import N_BOOT, length_difference, method_effects, path_length_table
from judgelab.narrative.paths.extraction import extract_narratives, other_rule_randoms
from judgelab.narrative.settings import PARAM_SETS, log_base, params_key

# ------------------------------------------------------------------------------ the declared choices
#: Every choice the grid varies: value -> label, whether it is a defensible reading of the paper
#: (robust / fragile count only those) and why (a quotation or the authors' code).
CHOICES: dict[str, dict[str, dict]] = {
    "embedding": {
        "precomputed": {"label": "authors' text-embedding-3-small", "defensible": True,
                        "why": "paper 4.1: documents embedded with OpenAI text-embedding-3-small; the authors' "
                               "vectors ship with the news collection"},
        "minilm": {"label": "all-MiniLM-L6-v2", "defensible": False,
                   "why": "not the paper's design: the embedding this compendium's VisPub and OOD rows rest on, "
                          "run on news to measure what it changes"},
    },
    "params": {
        "32/8": {"label": "32/8", "defensible": True,
                 "why": "the authors' path-comparison notebook (the stored paths behind Tables 1 and 4)"},
        "16/4": {"label": "16/4", "defensible": True,
                 "why": "the authors' examples notebook (Examples/news_articles.ipynb); the paper states neither"},
    },
    "jsd_base": {
        "e": {"label": "JSD ln", "defensible": True,
              "why": "the authors' code: scipy.spatial.distance.jensenshannon with its default natural log"},
        "2": {"label": "JSD log2", "defensible": True,
              "why": "paper eq. 1 names the Jensen-Shannon distance without a base; base 2 is its textbook "
                     "form, bounded by 1"},
    },
    "strata": {
        "ours": {"label": "strata: quartiles", "defensible": True,
                 "why": "paper 3.2 names six strata and their shares, not their cut-offs: ours are time "
                        "quartiles, degree deciles, the farthest 5% of pairs"},
        "other cut-offs": {"label": "strata: other cut-offs", "defensible": True,
                           "kw": {"time_quantile": 0.10, "degree_quantile": 0.25, "spatial_quantile": 0.10},
                           "why": "the same six strata with other unstated cut-offs: time deciles, degree "
                                  "quartiles, the farthest 10% of pairs"},
        "uniform": {"label": "no strata", "defensible": False,
                    "why": "not the paper's design (3.2 stratifies): every pair with a path equally likely, "
                           "run to bound what endpoint sampling does to path length"},
    },
    "baseline_dates": {
        "strict": {"label": "between: strict", "defensible": True,
                   "why": "paper 3.1: intermediates 'from those that occur temporally between the endpoints', "
                          "read literally (the endpoints' days excluded)"},
        "inclusive": {"label": "between: inclusive", "defensible": True,
                      "why": "the same sentence read inclusively: the candidates of the max-capacity graph, "
                             "whose same-day edges let it use the endpoints' days"},
    },
}
SEED_WHY = "the paper fixes no UMAP seed (the authors' notebooks use 42); UMAP's layout moves with it"
DIMENSIONS = ("embedding", "params", "seed", "jsd_base", "strata", "baseline_dates")
#: The Table 1 / 4 columns of one specification, by the register's table names.
TABLES = ("narr_table01_path_lengths", "narr_table04_effect_sizes")
ROBUST, FRAGILE, TOO_WIDE = "robust", "fragile", "too wide to tell"
NEVER = "not reproduced under any"   # some defensible specification decides against, none reproduces
NOT_COMPARABLE = "not comparable"   # this run's design is not the paper's (a subset, too few pairs)


def _check(dim: str, value) -> str:
    key = str(value)
    if dim == "jsd_base":
        key = "e" if math.isclose(log_base(value), math.e) else f"{log_base(value):g}"
    if key not in CHOICES[dim]:
        raise ValueError(f"profiles.toml [<profile>.robustness] {dim}: {value!r} is not one of "
                         f"{', '.join(CHOICES[dim])}")
    return key


@dataclass(frozen=True)
class GridSettings:
    """The grid a profile runs (``[<profile>.robustness]``) and its main specification (the
    profile's notebook 07/08 choices, ``[<profile>.narrative]``)."""

    profile: str
    collection: str
    values: dict                    # dimension -> tuple of values, main first
    main: dict                      # dimension -> the main value
    n_pairs: int
    n_boot: int
    knobs: dict = field(default_factory=dict)
    collection_knobs: dict = field(default_factory=dict)  # the collection's [<profile>.narrative] knobs
    embedding_url: str | None = None   # the configuration's embeddings.base_url (an OpenAI-protocol server)

    @property
    def n_specifications(self) -> int:
        return int(np.prod([len(v) for v in self.values.values()]))

    def specifications(self) -> list[dict]:
        """Every combination, in grid order (the main specification first)."""
        return [dict(zip(DIMENSIONS, combo)) for combo in itertools.product(*(self.values[d] for d in DIMENSIONS))]


def _main_first(values, main) -> tuple:
    values = list(dict.fromkeys(values))
    return tuple([main] + [v for v in values if v != main])


def grid_settings(profile: config.Config | str, *, n_pairs=None) -> GridSettings:
    """Resolve ``[<profile>.robustness]`` against notebook 07/08's knobs in the run's configuration
    (:func:`judgelab.config.of`): the main value of each dimension is the profile's own (so the main
    specification is notebook 08's main rows), and it is added to the grid when the profile's list lacks it."""
    cfg = config.of(profile)
    profile = cfg.profile
    knobs, narr = cfg.knobs("robustness"), cfg.knobs("narrative")
    name = knobs["collection"]
    if name not in narr["collections"]:
        raise ValueError(f"profiles.toml [{profile}.robustness] collection: {name!r} is not among "
                         f"[{profile}.narrative.collections] ({', '.join(narr['collections'])})")
    col = narr["collections"][name]
    main = {"embedding": _check("embedding", col["embedding"]),
            "params": _check("params", params_key(col["n_neighbors"], col["min_cluster_size"])),
            "seed": int(narr["seed"]), "jsd_base": _check("jsd_base", narr["jsd_base"]),
            "strata": "ours", "baseline_dates": _check("baseline_dates", narr.get("baseline_dates", "strict"))}
    # each dimension's values, from its [<profile>.robustness] knob
    listed = {"embedding": knobs["embeddings"], "params": knobs["params"], "seed": knobs["seeds"],
              "jsd_base": knobs["jsd_bases"], "strata": knobs["strata"], "baseline_dates": knobs["baseline_dates"]}
    values = {}
    for dim in DIMENSIONS:
        raw = listed[dim]
        got = [int(v) for v in raw] if dim == "seed" else [_check(dim, v) for v in raw]
        values[dim] = _main_first(got, main[dim])
    pairs = int(n_pairs) if n_pairs is not None else (int(col["n_pairs"]) if knobs["n_pairs"] is None
                                                      else int(knobs["n_pairs"]))
    if pairs < 1:
        raise ValueError(f"profiles.toml [{profile}.robustness] n_pairs: must be >= 1, got {pairs}")
    return GridSettings(profile, name, values, main, pairs, int(knobs["n_boot"]), dict(knobs), dict(col),
                        cfg.embeddings["base_url"].value)


def is_defensible(spec: dict) -> bool:
    """Every choice of ``spec`` is a defensible reading of the paper (:data:`CHOICES`)."""
    return all(CHOICES[d][spec[d]]["defensible"] for d in DIMENSIONS if d != "seed")


def choices_table() -> pd.DataFrame:
    """The declared choices: dimension, value, label, defensible, why (the notebook's first table)."""
    rows = [{"dimension": d, "value": v, "label": c["label"], "defensible": c["defensible"], "why": c["why"]}
            for d, vals in CHOICES.items() for v, c in vals.items()]
    rows.append({"dimension": "seed", "value": "any", "label": "UMAP seed", "defensible": True, "why": SEED_WHY})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ the grid
@dataclass
class GridInputs:
    """The collection's documents and, per embedding, its vectors (row i = document i)."""

    collection: str
    dates: np.ndarray
    titles: list
    embeddings: dict[str, np.ndarray]
    fits: dict = field(default_factory=dict)   # (embedding, params, seed) -> Landscape known already


def embedding_kind(source: str) -> str:
    """The :data:`CHOICES` embedding of a landscape's ``embedding_source``."""
    source = str(source)
    if source.startswith("precomputed"):
        return "precomputed"
    if "minilm" in source.lower():
        return "minilm"
    return source


def load_inputs(settings: GridSettings) -> GridInputs:
    """Notebook 07's documents and landscape of the collection (its main fit reused as the main
    specification's, its vectors as their embedding's) and, for every other embedding of the
    grid, the same documents embedded by that backend (:func:`prepare_collection`: cached)."""
    from judgelab.narrative.landscape import store
    from judgelab.narrative.landscape.build import prepare_collection

    name = settings.collection
    land, docs = store.load_landscape(name), store.load_documents(name)
    kind = embedding_kind(land["embedding_source"])
    main = settings.main
    embeddings = {kind: np.asarray(land["embeddings"])}
    fits = {}
    if kind == main["embedding"] and int(land["main_seed"]) == main["seed"]:
        labels = np.asarray(land["labels"])
        fits[(kind, main["params"], main["seed"])] = projection.Landscape(
            np.empty((len(labels), 0)), np.asarray(land["memberships"]), labels, labels, main["seed"], {})
    for emb in settings.values["embedding"]:
        if emb not in embeddings:
            col = prepare_collection(name, {**settings.collection_knobs, "embedding": emb},
                                     embedding_url=settings.embedding_url)
            if len(col) != len(docs):
                raise ValueError(f"{name}: {len(col)} documents embedded by {emb}, notebook 07 wrote {len(docs)}")
            embeddings[emb] = np.asarray(col.embeddings)
    return GridInputs(name, np.asarray(land["dates"]), docs["title"].tolist(), embeddings, fits)


@dataclass
class GridResult:
    settings: GridSettings
    specifications: pd.DataFrame     # one row per specification: its choices, critical, topics, pairs
    tables: dict                     # spec_id -> {table name: frame in Table 1 / 4's columns}
    paths: dict                      # spec_id -> the specification's paths (PATH_COLUMNS)
    n_fits: int                      # UMAP + HDBSCAN fits run (the rest reused)


def spec_id(spec: dict) -> str:
    return " | ".join(f"{spec[d]}" for d in DIMENSIONS)


def _tables(paths: pd.DataFrame, n_boot: int, seed: int) -> dict:
    """Table 1's and Table 4's columns for one specification, from notebook 08's own functions
    (``gap`` columns as Table 1 names them)."""
    t1 = path_length_table(paths, n_boot, seed)
    gap = length_difference(paths, n_boot, seed).rename(columns={
        "difference": "gap", "difference_ci_low": "gap_ci_low", "difference_ci_high": "gap_ci_high",
        "p_value": "gap_p", "p_welch": "gap_p_welch"})
    t1 = t1.merge(gap.drop(columns=["n_pairs", "note"]), on="collection", how="left")
    t1.loc[t1["method"] != "random", ["gap", "gap_ci_low", "gap_ci_high", "gap_p", "gap_p_welch"]] = np.nan
    return {TABLES[0]: t1, TABLES[1]: method_effects(paths, n_boot=n_boot, seed=seed)}


def run_grid(inputs: GridInputs, settings: GridSettings, fit: Callable | None = None) -> GridResult:
    """Every specification of ``settings`` on ``inputs`` (module doc: what is shared)."""
    fit = fit or projection.fit_landscape
    v, boot_seed = settings.values, settings.main["seed"]
    rows, tables, all_paths, n_fits = [], {}, {}, 0
    for emb, params, seed in itertools.product(v["embedding"], v["params"], v["seed"]):
        z = inputs.embeddings[emb]
        land = inputs.fits.get((emb, params, seed))
        if land is None:
            p = PARAM_SETS[params]
            land = fit(z, n_neighbors=p["n_neighbors"], min_cluster_size=p["min_cluster_size"], seed=int(seed))
            n_fits += 1
        for base in v["jsd_base"]:
            c = coherence_matrix(z, land.memberships, log_base(base))
            crit = float(critical_coherence(c))
            for strata in v["strata"]:
                kw = CHOICES["strata"][strata]
                main_rule = v["baseline_dates"][0] == "strict"
                paths = extract_narratives(inputs.collection, c, crit, inputs.dates, inputs.titles, land.labels, z,
                                           n_pairs=settings.n_pairs, seed=int(seed), strict_dates=main_rule,
                                           pool_kw=kw.get("kw"), uniform=strata == "uniform")
                other = other_rule_randoms(paths, c, inputs.dates, inputs.titles, strict_dates=main_rule)
                mc = paths[paths["method"] == "maxcap"]
                for rule in v["baseline_dates"]:
                    spec = {"embedding": emb, "params": params, "seed": int(seed), "jsd_base": base,
                            "strata": strata, "baseline_dates": rule}
                    sp = paths if rule == v["baseline_dates"][0] else pd.concat(
                        [mc, other.drop(columns="baseline_dates")], ignore_index=True)
                    sid = spec_id(spec)
                    tables[sid] = _tables(sp, settings.n_boot, boot_seed)
                    all_paths[sid] = sp
                    rows.append({"spec_id": sid, **spec, "main": spec == settings.main,
                                 "defensible": is_defensible(spec), "critical": crit,
                                 "n_topics": int(np.asarray(land.memberships).shape[1]),
                                 "n_pairs": int(mc["pair_id"].nunique()),
                                 "shortfall": int(sum(paths.attrs.get("shortfall", {}).values()))})
    specs = pd.DataFrame(rows)
    return GridResult(settings, specs, tables, all_paths, n_fits)


# ------------------------------------------------------------------------------ claims
def news_math_claims(claims=None, collection: str = "news") -> list:
    """The register's claims this grid can recompute: the mathematics (llm false) of ``collection``
    read from Table 1 or 4 with an interval there."""
    claims = register.load() if claims is None else claims
    return [c for c in claims if not c.llm and c.table in TABLES and c.where.get("collection") == collection
            and c.ci_columns == "table"]


def _row(claim, t: pd.DataFrame) -> pd.Series | None:
    """The claim's row of a specification's table: its ``where`` on the columns the table has
    (collection, method, metric column); params and date rule are the specification itself."""
    keep = np.ones(len(t), dtype=bool)
    for key, want in claim.where.items():
        if key in ("params", "baseline_dates", "collection"):
            continue
        if key in t.columns:
            keep &= t[key].astype(str).to_numpy() == str(want)
    hit = t[keep]
    return hit.iloc[0] if len(hit) == 1 else None


#: The register's design dependencies the grid varies itself (the JSD base, the parameter set):
#: each specification is judged by the claim's rule under its own value, and :data:`CHOICES`
#: says which values count towards the label, so they are no design difference here.
GRID_VARIED = ("jsd_base", "parameter_set")
#: What every specification holds fixed, as a sidecar records it (the paper's temporal rule:
#: :func:`extract_narratives` keeps ``temporal=True``).
GRID_SIDECAR = {"choices": ["temporal=True"]}


def _grid_design(claim):
    """The claim with the dependencies the grid varies (:data:`GRID_VARIED`) left out."""
    return replace(claim, depends_on=tuple(d for d in claim.depends_on if d not in GRID_VARIED))


def claim_estimates(result: GridResult, claims=None) -> pd.DataFrame:
    """One row per specification x claim: the estimate, its 95% interval and p from the columns the
    scorecard reads, the paper's value, and the claim's own verdict
    (:func:`judgelab.claims.verdicts.decide`)."""
    claims = news_math_claims(claims, result.settings.collection)
    rows = []
    for spec in result.specifications.itertuples(index=False):
        for c in claims:
            row = _row(c, result.tables[spec.spec_id][c.table])
            f = (lambda col: float(pd.to_numeric(row[col], errors="coerce")) if row is not None and col in row.index
                 else math.nan)
            est, lo, hi = f(c.column), f(c.ci_low_column), f(c.ci_high_column)
            p = f(c.p_column) if c.p_column else math.nan
            units = f(c.units_column) if c.units_column else None
            diffs = design.differences(_grid_design(c), GRID_SIDECAR | {"profile": result.settings.profile}, units)
            v = verdicts.decide(c.rule, paper_value=c.paper_value(), estimate=est, ci_low=lo, ci_high=hi,
                                p=p if math.isfinite(p) else None)
            if diffs:   # as the scorecard: numbers shown, no rule applied
                v = verdicts.Verdict(verdicts.NOT_COMPARABLE, "design differs: " + "; ".join(diffs), v.ci_width)
            rows.append({"spec_id": spec.spec_id, **{d: getattr(spec, d) for d in DIMENSIONS},
                         "main": spec.main, "defensible": spec.defensible, "claim_id": c.id, "label": c.label,
                         "family": c.family, "rule": c.rule["type"], "estimate": est, "ci_low": lo, "ci_high": hi, "p": p,
                         "paper_value": c.paper_value(), "margin": c.margin, "verdict": v.verdict,
                         "reason": v.reason, "unit": c.unit,
                         "ci_method": str(row["ci_method"]) if row is not None and "ci_method" in row.index
                         else "percentile cluster bootstrap over endpoint pairs"})
    return pd.DataFrame(rows)


def robustness_label(verdict_list) -> str:
    """The label of one claim from its defensible specifications' verdicts (:func:`claims_robustness`)."""
    v = pd.Series(list(verdict_list), dtype=object)
    rep, against = v == verdicts.REPRODUCED, v == verdicts.NOT_REPRODUCED
    if (v == verdicts.NOT_COMPARABLE).all():
        return NOT_COMPARABLE
    if rep.all():
        return ROBUST
    if rep.any() and against.any():
        return FRAGILE
    return NEVER if against.any() else TOO_WIDE


def claims_robustness(estimates: pd.DataFrame) -> pd.DataFrame:
    """Per claim, over the defensible specifications: how many, the share that reproduce it, the
    range of the estimate, and a label: ``robust`` (every one reproduces it), ``fragile`` (some
    reproduce it, some decide against: the choice decides the verdict), ``not reproduced under
    any`` (some decide against, none reproduces), ``too wide to tell`` (none decides against, not
    all reproduce: the rest inconclusive) or ``not comparable`` (the run's design is not
    the paper's in what the claim depends on, :func:`judgelab.claims.design.differences`: a subset
    of the collection, fewer pairs than the claim's minimum; as the scorecard, no rule is applied).
    Notebook 13 shows it beside each verdict (:func:`judgelab.claims.scorecard.with_robustness`,
    joined on ``claim_id``)."""
    d = estimates[estimates["defensible"]]
    rows = []
    for cid, g in d.groupby("claim_id", sort=False):
        rep = (g["verdict"] == verdicts.REPRODUCED)
        label = robustness_label(g["verdict"])
        main = g[g["main"]]
        rows.append({"claim_id": cid, "label": g["label"].iloc[0], "n_specifications": len(g),
                     "n_reproduced": int(rep.sum()), "n_not_reproduced": int((g["verdict"] == verdicts.NOT_REPRODUCED).sum()),
                     "n_inconclusive": int((g["verdict"] == verdicts.INCONCLUSIVE).sum()),
                     "share_reproduced": float(rep.mean()),
                     "estimate_min": float(g["estimate"].min()), "estimate_max": float(g["estimate"].max()),
                     "main_estimate": float(main["estimate"].iloc[0]) if len(main) else math.nan,
                     "main_verdict": main["verdict"].iloc[0] if len(main) else "",
                     "paper_value": float(g["paper_value"].iloc[0]), "robustness": label,
                     "n_specifications_shown": int((estimates["claim_id"] == cid).sum())})
    return pd.DataFrame(rows)


def choice_effects(estimates: pd.DataFrame) -> pd.DataFrame:
    """Per claim and dimension: the mean estimate at each value of the dimension over the
    specifications that share the others (a main effect in the grid), and the share reproduced."""
    rows = []
    for cid, g in estimates.groupby("claim_id", sort=False):
        for dim in DIMENSIONS:
            if g[dim].nunique() < 2:
                continue
            for value, h in g.groupby(dim, sort=False):
                rows.append({"claim_id": cid, "dimension": dim, "value": str(value), "n_specifications": len(h),
                             "mean_estimate": float(h["estimate"].mean()), "estimate_min": float(h["estimate"].min()),
                             "estimate_max": float(h["estimate"].max()),
                             "share_reproduced": float((h["verdict"] == verdicts.REPRODUCED).mean()),
                             "paper_value": float(h["paper_value"].iloc[0])})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ path length, embedding
LENGTH_READINGS = {"documents": ("documents, endpoints included (ours, the paper's Figure 8h axis)", 0.0),
                   "edges": ("edges (documents - 1)", -1.0)}


def path_length_note(result: GridResult, estimates: pd.DataFrame, claims=None) -> pd.DataFrame:
    """Can any choice bring the paper's mean path lengths (Table 1: 4.70 max-capacity, 3.97 random
    on news) within the claim's margin? Per length claim and counting convention (documents, or
    edges = documents - 1, a shift of the mean and its interval by exactly -1): over every
    specification shown, how many the claim's rule calls reproduced, the range of the estimate,
    the main specification's estimate and interval, and the shortest path seen (the paper's
    Table 1 minimum is 2, the fewest documents a path can have)."""
    claims = {c.id: c for c in news_math_claims(claims, result.settings.collection)
              if c.table == TABLES[0] and c.column == "mean"}
    rows = []
    shortest = {m: min(int(p.loc[p["method"] == m, "length"].min()) for p in result.paths.values())
                for m in ("maxcap", "random")}
    for cid, c in claims.items():
        g = estimates[estimates["claim_id"] == cid]
        method = c.where.get("method")
        for key, (reading, shift) in LENGTH_READINGS.items():
            vs = [verdicts.decide(c.rule, paper_value=c.paper_value(), estimate=e + shift, ci_low=lo + shift,
                                  ci_high=hi + shift).verdict
                  for e, lo, hi in zip(g["estimate"], g["ci_low"], g["ci_high"])]
            rep = np.array([v == verdicts.REPRODUCED for v in vs])
            main = g[g["main"]]
            rows.append({"claim_id": cid, "method": method, "reading": reading, "n_specifications": len(g),
                         "n_reproduced": int(rep.sum()), "share_reproduced": float(rep.mean()) if len(g) else math.nan,
                         "reproduced_by": "; ".join(g["spec_id"][rep]) if rep.any() else "none",
                         "estimate_min": float(g["estimate"].min() + shift), "estimate_max": float(g["estimate"].max() + shift),
                         "main_estimate": float(main["estimate"].iloc[0] + shift) if len(main) else math.nan,
                         "main_ci_low": float(main["ci_low"].iloc[0] + shift) if len(main) else math.nan,
                         "main_ci_high": float(main["ci_high"].iloc[0] + shift) if len(main) else math.nan,
                         "shortest_path": shortest[method] + shift, "paper_value": c.paper_value(),
                         "paper_min": _paper_min(method), "margin": c.margin, "unit": c.unit,
                         "ci_method": g["ci_method"].iloc[0] if len(g) else ""})
    return pd.DataFrame(rows)


def _paper_min(method: str) -> float:
    from judgelab.narrative.paths.paper_values import PAPER_TABLE1
    return float(PAPER_TABLE1.get(("news", method), {}).get("min", math.nan))


def embedding_effect(estimates: pd.DataFrame, reference: str = "precomputed", other: str = "minilm") -> pd.DataFrame:
    """Per claim: the specifications that differ only in the embedding, paired; the difference
    ``other`` - ``reference`` of the estimate (mean, min, max over the pairs), the share of pairs
    with the same verdict, and the main specification's estimate under each (so a reader sees how
    far a MiniLM row may sit from the paper's design). Empty when the grid ran one embedding."""
    if not {reference, other} <= set(estimates["embedding"]):
        return pd.DataFrame()
    keys = [d for d in DIMENSIONS if d != "embedding"]
    rows = []
    for cid, g in estimates.groupby("claim_id", sort=False):
        a = g[g["embedding"] == reference].set_index(keys)
        b = g[g["embedding"] == other].set_index(keys)
        both = a.index.intersection(b.index)
        diff = b.loc[both, "estimate"] - a.loc[both, "estimate"]
        same = (b.loc[both, "verdict"] == a.loc[both, "verdict"]).mean()
        main_keys = tuple(g[g["main"]][keys].iloc[0]) if g["main"].any() else None
        ra = a.loc[[main_keys]].iloc[0] if main_keys in a.index else None
        rb_ = b.loc[[main_keys]].iloc[0] if main_keys in b.index else None
        rows.append({"claim_id": cid, "label": g["label"].iloc[0], "n_pairs_of_specifications": len(both),
                     "difference_mean": float(diff.mean()), "difference_min": float(diff.min()),
                     "difference_max": float(diff.max()), "same_verdict_share": float(same),
                     f"main_{reference}": ra["estimate"] if ra is not None else math.nan,
                     f"main_{reference}_ci": f"[{ra['ci_low']:.3g}, {ra['ci_high']:.3g}]" if ra is not None else "",
                     f"main_{reference}_verdict": ra["verdict"] if ra is not None else "",
                     f"main_{other}": rb_["estimate"] if rb_ is not None else math.nan,
                     f"main_{other}_ci": f"[{rb_['ci_low']:.3g}, {rb_['ci_high']:.3g}]" if rb_ is not None else "",
                     f"main_{other}_verdict": rb_["verdict"] if rb_ is not None else "",
                     "paper_value": float(g["paper_value"].iloc[0])})
    return pd.DataFrame(rows)


def families(estimates: pd.DataFrame) -> dict[str, list[str]]:
    """Claim family -> its claims, in the register's order (one specification-curve figure each)."""
    out: dict[str, list[str]] = {}
    for fam, cid in zip(estimates["family"], estimates["claim_id"]):
        out.setdefault(fam, [])
        if cid not in out[fam]:
            out[fam].append(cid)
    return out


# ------------------------------------------------------------------------------ the label's error rates
Z95 = 1.959963984540054   # the normal 97.5% quantile: the specifications' intervals are 95% ones


def verdict_regions(claim, se: float, span: float | None = None, grid: int = 2001):
    """The claim's verdict (:func:`judgelab.claims.verdicts.decide`, the rule itself) as a function
    of the estimate when its 95% interval is estimate ± 1.96 se: piecewise constant, so found once
    on a grid around the paper's value and each change point refined by bisection. Returns
    (breakpoints, verdicts): ``verdicts[np.searchsorted(breakpoints, x)]`` is the verdict at x."""
    pv, m = claim.paper_value(), claim.margin
    span = span if span is not None else 4 * m + 12 * se

    def verdict(x: float) -> str:
        return verdicts.decide(claim.rule, paper_value=pv, estimate=x, ci_low=x - Z95 * se, ci_high=x + Z95 * se).verdict

    xs = np.linspace(pv - span, pv + span, grid)
    vs = [verdict(x) for x in xs]
    breaks, out = [], [vs[0]]
    for i in range(1, grid):
        if vs[i] != vs[i - 1]:
            lo, hi = xs[i - 1], xs[i]
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if verdict(mid) == vs[i - 1] else (lo, mid)
            breaks.append(hi)
            out.append(vs[i])
    return np.array(breaks), out


def label_rates(claim, se: float, k: int, rhos=(0.0, 0.9), n_sim: int = 2000, seed: int = 0) -> pd.DataFrame:
    """How often each label comes out when the truth is known, by simulation at the grid's design:
    ``k`` defensible specifications whose estimates share a correlation ``rho`` (they share
    documents and most endpoints; the two values bound it), each with a normal 95% interval of
    standard error ``se`` (the main specification's), judged by the claim's own rule
    (:func:`verdict_regions`) and labelled by :func:`robustness_label`. Truths: the paper's value
    (the claim holds: P(robust) is the label's power), the value at the margin's edge (P(robust) is
    its false-robust rate), and twice the margin away (the claim is false). Value rules only (the
    others have no paper value to sit on)."""
    pv, m = claim.paper_value(), claim.margin
    breaks, names = verdict_regions(claim, se)
    rep = np.array([n == verdicts.REPRODUCED for n in names])
    against = np.array([n == verdicts.NOT_REPRODUCED for n in names])
    rng = np.random.default_rng(seed)
    rows = []
    for rho in rhos:
        z = math.sqrt(rho) * rng.standard_normal((n_sim, 1)) + math.sqrt(1 - rho) * rng.standard_normal((n_sim, k))
        for where, truth in (("at the paper's value", pv), ("at the margin's edge", pv + m),
                             ("twice the margin away", pv + 2 * m)):
            idx = np.searchsorted(breaks, truth + se * z)
            n_rep, n_against = rep[idx].sum(axis=1), against[idx].sum(axis=1)
            # the label depends only on how many specifications reproduce and decide against
            combos, inverse = np.unique(np.stack([n_rep, n_against], axis=1), axis=0, return_inverse=True)
            label_of = [robustness_label([verdicts.REPRODUCED] * r + [verdicts.NOT_REPRODUCED] * a
                                         + [verdicts.INCONCLUSIVE] * (k - r - a)) for r, a in combos]
            labels = np.array(label_of, dtype=object)[np.ravel(inverse)]
            for label in (ROBUST, FRAGILE, NEVER, TOO_WIDE):
                rows.append({"claim_id": claim.id, "rho": rho, "truth": where, "true_value": truth, "k": k,
                             "se": se, "label": label, "share": float((labels == label).mean()), "n_sim": n_sim})
    return pd.DataFrame(rows)


def label_error_rates(estimates: pd.DataFrame, claims=None, n_sim: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`label_rates` for every value-rule claim of the grid, at its main specification's
    standard error (the 95% interval's width / (2 x 1.96)) and its number of defensible
    specifications."""
    by_id = {c.id: c for c in news_math_claims(claims)}
    out = []
    for cid, g in estimates.groupby("claim_id", sort=False):
        c, main = by_id.get(cid), g[g["main"]]
        if c is None or c.rule["type"] != "value" or not len(main):
            continue
        se = float(main["ci_high"].iloc[0] - main["ci_low"].iloc[0]) / (2 * Z95)
        k = int(g["defensible"].sum())
        if math.isfinite(se) and se > 0 and k:
            out.append(label_rates(c, se, k, n_sim=n_sim, seed=seed))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()
