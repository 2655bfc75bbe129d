"""Every knob acts, the narrative side: each knob of ``[<profile>.narrative]`` (and its collections),
``.narrative_judges``, ``.cost_ood``, ``.robustness`` and ``.behaviour`` that ``tests/test_knobs.py``
does not probe, changed alone in a profile inheriting ``smoke``, changes an output of the code that
consumes it, called as its notebook (07, 08, 09, 10, 12, 14) calls it with the resolved configuration.

The outputs are what the notebook reports or what the judge is sent (for a request knob, the
requests built for the judge, serialised: messages, schema, sampling). No model is loaded and no
notebook runs: landscapes are a few dozen synthetic documents, and where the notebook's code fits
UMAP + HDBSCAN (or embeds) a deterministic stand-in records its arguments (UMAP's numba compile
alone takes ~30 s on these machines); the recorded arguments are then the output, as a request
body is for a judge. Where a notebook's step sends requests through a gateway (notebook 10's cost
sample and OOD study), the judge call is stopped at its door and what it was asked to judge is the
output. The collections other profiles add (paper's vispub, own's own) share news's consumers;
VisPub's own knobs (``year_range``, a collection's ``path_seeds``) have their test below.

Each probe fails when its knob no longer reaches the output (tried: the random baseline's date rule
fixed to strict, the OOD off-topic quantile fixed at 0.1, notebook 07 keeping 2 path seeds whatever
``path_seeds`` says: each went red).
"""
from __future__ import annotations

import json
import warnings
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from test_knobs import BASE, _base_output, _same, probe_config
from test_robustness import toy

from judgelab import config

# ---------------------------------------------------------------- small synthetic inputs


def _requests(reqs) -> list:
    """Requests as the judge receives them: messages, reply schema, sampling (JSON, comparable)."""
    out = []
    for r in reqs:
        schema = r.schema.model_json_schema() if r.schema is not None else None
        out.append(json.dumps({"messages": [(m.role, m.content) for m in r.messages], "schema": schema,
                               "sampling": r.sampling.model_dump(), "replicate": r.replicate},
                              sort_keys=True, default=str))
    return out


def _paths(collection: str = "news", n_pairs: int = 8, n_docs: int = 40) -> pd.DataFrame:
    """Notebook 08's ``narr_paths`` shape: per pair a max-capacity and a random path over ``n_docs``."""
    rng = np.random.default_rng(5)
    rows = []
    for p in range(n_pairs):
        for method in ("maxcap", "random"):
            path = [int(x) for x in rng.choice(n_docs, size=int(rng.integers(3, 7)), replace=False)]
            rows.append({"collection": collection, "pair_id": p, "method": method, "path": path,
                         "titles": [f"{collection} document {d}" for d in path], "length": len(path),
                         "stratum": "within_topic_short", "min_coherence": float(rng.uniform(0.2, 0.5)),
                         "mean_coherence": float(rng.uniform(0.5, 0.8))})
    return pd.DataFrame(rows)


def _coherence(n_docs: int = 40) -> np.ndarray:
    rng = np.random.default_rng(6)
    c = rng.uniform(0.1, 0.9, size=(n_docs, n_docs))
    c = (c + c.T) / 2
    np.fill_diagonal(c, 1.0)
    return c


def _fit_stub(calls: list):
    """A deterministic stand-in for UMAP + HDBSCAN (``tests/test_robustness.py``'s memberships: 4
    topics, moved by the seed and the parameter set) that records (documents, n_neighbors,
    min_cluster_size, seed) of every call."""
    from test_robustness import memberships

    from judgelab.narrative.landscape.projection import Landscape

    def fit(embeddings, *, n_neighbors, min_cluster_size, seed):
        calls.append((len(embeddings), n_neighbors, min_cluster_size, seed))
        labels = np.arange(len(embeddings)) % 4
        memb = memberships(labels, seed, f"{n_neighbors}/{min_cluster_size}")
        return Landscape(embeddings[:, :2], memb, labels, labels, int(seed), {})
    return fit


def _toy_collection():
    """``toy()``'s 40 documents as notebook 07 loads a collection, with their vectors."""
    from judgelab.narrative.landscape.collections import DocumentCollection

    emb, dates, _ = toy()
    docs = pd.DataFrame({"doc": range(len(dates)), "title": [f"t{i}" for i in range(len(dates))],
                         "date": pd.to_datetime(dates, unit="D"), "text": ["x"] * len(dates)})
    return DocumentCollection("news", docs, emb, "")


# ---------------------------------------------------------------- notebook 07: the landscape


def _landscapes(cfg, dense_limit=None):  # notebook 07: build.build_landscapes(landscape_settings(...)) on the toy collection
    # loading, embedding (the backend asked is recorded), UMAP + HDBSCAN and the 2-D UMAP are stand-ins
    from judgelab.narrative.landscape import build
    from judgelab.narrative.settings import landscape_settings

    fits, maps, asked = [], [], []
    with mock.patch.object(build, "load_collection", lambda name, years=None: _toy_collection()), \
            mock.patch.object(build, "embed_collection", lambda col, backend, **kw: asked.append(backend) or col), \
            mock.patch.object(build, "fit_landscape", _fit_stub(fits)), \
            mock.patch.object(build, "project_2d", lambda emb, n, seed: maps.append((len(emb), n, seed)) or emb[:, :2]):
        study = build.build_landscapes(landscape_settings(cfg, dense_limit=dense_limit))
    return (fits, maps, asked, study.sensitivity,
            {name: sorted(c.path_runs) for name, c in study.collections.items()})


def _sparse_landscapes(cfg):  # notebook 07 with DENSE_LIMIT=10 (make own DENSE_LIMIT=10): the 40 documents take the sparse route
    return _landscapes(cfg, dense_limit=10)


# ---------------------------------------------------------------- notebook 08: the paths


def _extracted(cfg):  # notebook 08: extraction.extract_over_seeds(...) with pairs_for, temporal, strict_dates
    from judgelab.narrative.landscape.coherence import coherence_matrix
    from judgelab.narrative.landscape.graph import critical_coherence
    from judgelab.narrative.paths import extraction
    from judgelab.narrative.settings import path_settings
    from test_robustness import memberships

    s = path_settings(cfg)
    emb, dates, labels = toy()
    c = coherence_matrix(emb, memberships(labels, 42, "32/8"), np.e)
    land = {"path_seeds": np.array([42]), "coherence_by_seed": [c], "critical_path_seeds": [critical_coherence(c)],
            "dates": dates, "labels_by_seed": [labels], "embeddings": emb}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short strata on 40 documents
        out = extraction.extract_over_seeds("news", land, [f"t{i}" for i in range(len(dates))], s.pairs_for("news"),
                                            s.temporal, s.strict_dates)
    return out.paths[["pair_id", "method", "length"]].assign(path=out.paths["path"].astype(str))


def _alt_fit(cfg):  # notebook 08: extract_study refits at settings.alt_params(name) -> the parameter set asked
    from judgelab.narrative.paths import extraction
    from judgelab.narrative.settings import path_settings

    calls: list = []
    with mock.patch.object(extraction, "fit_landscape", _fit_stub(calls)):
        extraction.refit_landscape(toy()[0], path_settings(cfg).alt_params("news"), 42)
    return calls


def _investigation(cfg):  # notebook 08: `path_length_investigation(study) if settings.investigate_lengths`
    from judgelab.narrative.settings import path_settings

    return path_settings(cfg).investigate_lengths


# ---------------------------------------------------------------- notebook 09: the judges' requests


def _judge_requests(cfg):  # notebook 09: run_judges(... max_tokens, reasoning_chars ...) -> build_requests
    from judgelab.narrative.judges.run import agent_spread, build_requests
    from judgelab.narrative.settings import judge_knobs

    k = judge_knobs(cfg)
    paths = _paths(n_pairs=1)
    _, reqs = build_requests(paths, {"news": agent_spread(1, k["temperature_range"], k["seed"])}, k["modes"],
                             max_tokens=k["max_tokens"], explanations=k["explanations"],
                             reasoning_chars=k["reasoning_chars"])
    return _requests(reqs)


# ---------------------------------------------------------------- notebook 10: cost, OOD, prediction


class _Stop(Exception):
    pass


@contextmanager
def _judge_door(asked: list):
    """Stop notebook 10's judge call at the gateway's door and keep what it was asked."""
    from judgelab.narrative.judges import run as judges

    def door(gw, paths, **kw):
        asked.append({"narratives": paths.drop(columns=[c for c in ("titles",) if c in paths])
                      .astype(str).to_dict("records"), "titles": [list(t) for t in paths["titles"]],
                      **{k: str(v) for k, v in kw.items()}})
        raise _Stop

    with mock.patch.object(judges, "run_judges", door):
        yield


class _Ledger:
    model_name = "stub"

    @staticmethod
    def ledger_frame():
        return pd.DataFrame()


def _cost_sample(cfg):  # notebook 10: cost.run_cost_sample(gw, all_paths, n_pairs=..., modes=..., seed=SEED, ...)
    from judgelab.narrative.analyses import cost
    from judgelab.narrative.settings import cost_ood_knobs

    k = cost_ood_knobs(cfg)
    asked: list = []
    with _judge_door(asked), pytest.raises(_Stop):
        cost.run_cost_sample(_Ledger(), _paths(), n_pairs=k["n_cost_pairs"], modes=k["cost_modes"], seed=k["seed"],
                             max_tokens=k["max_tokens"], reasoning_chars=k["reasoning_chars"], profile="probe")
    return asked


def _joint(n: int = 40):
    from judgelab.narrative.analyses.joint_collection import JointCollection

    docs = pd.DataFrame({"collection": ["news", "vispub"] * (n // 2), "doc": np.arange(n) // 2,
                         "title": [f"joint {i}" for i in range(n)], "joint": np.arange(n)})
    return JointCollection(docs, np.zeros((n, 2)), _coherence(n), 3, "stub")


def _ood_study(cfg):  # notebook 10: ood_study.run_ood_study(gw, joint, all_paths, scores, ...) -> what is judged
    from judgelab.narrative.analyses import ood_study
    from judgelab.narrative.settings import cost_ood_knobs

    k = cost_ood_knobs(cfg)
    paths = _paths()
    scores = pd.DataFrame([{"collection": "news", "pair_id": p, "method": "maxcap", "mode": "simple", "agent": a,
                            "seed": 2025 + a} for p in range(8) for a in range(2)])
    asked: list = []
    with _judge_door(asked), pytest.raises(_Stop):
        ood_study.run_ood_study(_Ledger(), _joint(), paths, scores, {"news": _coherence()},
                                {"news": [f"news document {d}" for d in range(40)]}, n_ood=k["n_ood"],
                                n_perturbed=k["n_perturbed"], modes=k["ood_modes"], k=k["k"], seed=k["seed"],
                                off_topic_quantile=k["off_topic_quantile"], max_tokens=k["max_tokens"],
                                reasoning_chars=k["reasoning_chars"], profile="probe")
    return asked


def _joint_collection(cfg):  # notebook 10: joint_collection.build_joint_collection(found.docs, ...) -> docs, fit asked
    from judgelab.narrative.analyses import joint_collection
    from judgelab.narrative.landscape import projection
    from judgelab.narrative.settings import cost_ood_knobs

    k = cost_ood_knobs(cfg)
    docs = {c: pd.DataFrame({"doc": range(n), "title": [f"{c} {i}" for i in range(n)],
                             "date": pd.date_range("2016-01-01", periods=n),
                             "text": [f"{c} text {i}" for i in range(n)]})
            for c, n in (("news", 20), ("vispub", 400))}

    class Backend:  # a stand-in embedder: MiniLM's load costs seconds
        name = "stub"

        @staticmethod
        def embed(texts):
            return np.random.default_rng(len(texts)).normal(size=(len(texts), 6))

    calls: list = []
    with mock.patch.object(projection, "fit_landscape", _fit_stub(calls)):
        joint = joint_collection.build_joint_collection(
            docs, ("news", "vispub"), subset={"vispub": k["vispub_subset"]}, backend=Backend(),
            n_neighbors=k["joint_neighbors"], min_cluster_size=k["joint_min_cluster_size"], seed=k["seed"],
            jsd_base=k["jsd_base"])
    return joint.docs.groupby("collection").size().to_dict(), calls


def _long(n_pairs: int = 24) -> pd.DataFrame:
    """``inputs.narrative_table``'s shape: per pair, method and mode a judged narrative."""
    from judgelab.narrative.analyses.prediction import FEATURES

    rng = np.random.default_rng(8)
    rows = []
    for p in range(n_pairs):
        for method in ("maxcap", "random"):
            feats = {f: float(rng.normal()) for f in FEATURES}
            rows.append({"collection": "news", "pair_id": p, "method": method, "mode": "simple", **feats,
                         "score_mean": float(feats[FEATURES[0]] + rng.normal()), "score_sd": 0.5, "n_agents": 2})
    return pd.DataFrame(rows)


def _prediction(cfg):  # notebook 10: prediction.predictive_table(long, n_splits=..., seed=SEED, n_estimators=...)
    from judgelab.narrative.analyses import prediction
    from judgelab.narrative.settings import cost_ood_knobs

    k = cost_ood_knobs(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prediction.predictive_table(_long(), n_splits=k["n_splits"], seed=k["seed"],
                                           n_estimators=k["n_estimators"])


def _importance(cfg):  # notebook 10: prediction.feature_importance_table(long, seed=SEED, n_estimators=..., n_boot=...)
    from judgelab.narrative.analyses import prediction
    from judgelab.narrative.settings import cost_ood_knobs

    k = cost_ood_knobs(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prediction.feature_importance_table(_long(), seed=k["seed"], n_estimators=k["n_estimators"],
                                                   n_boot=k["importance_boot"])


# ---------------------------------------------------------------- notebook 14: the specification grid


def _grid(cfg):  # notebook 14: robustness.grid_settings(PROFILE, n_pairs=...) -> the specifications, their pairs
    from judgelab.narrative.analyses import robustness

    try:
        g = robustness.grid_settings(cfg)
    except ValueError as refused:  # a collection the profile does not have: the notebook stops, naming the knob
        return str(refused)
    return g.collection, g.specifications(), g.n_pairs


def _grid_tables(cfg):  # notebook 14: run_grid's Tables 1 and 4 per specification, intervals by n_boot resamples
    from dataclasses import replace

    from judgelab.narrative.analyses import robustness
    from test_robustness import run

    g = robustness.grid_settings(cfg)
    g = replace(g, values={d: (g.main[d],) for d in robustness.DIMENSIONS}, n_pairs=6)  # the main specification
    tables = run(g).tables
    return tables[next(iter(tables))][robustness.TABLES[0]]


def _label_rates(cfg):  # notebook 14: label_error_rates(estimates, n_sim=label_simulations, seed=main seed)
    from judgelab.narrative.analyses import robustness

    g = robustness.grid_settings(cfg)
    claims = _news_claims()
    value_claim = next(c for c in claims if c.rule["type"] == "value")
    est = pd.DataFrame([{"claim_id": value_claim.id, "main": True, "ci_low": 0.0, "ci_high": 0.4, "defensible": True}])
    return robustness.label_error_rates(est, claims, n_sim=int(g.knobs["label_simulations"]), seed=g.main["seed"])


_CLAIMS: list = []


def _news_claims():
    """The register's news claims, read once (the register is not this file's subject)."""
    from judgelab.narrative.analyses import robustness

    if not _CLAIMS:
        _CLAIMS.extend(robustness.news_math_claims())
    return _CLAIMS


# ---------------------------------------------------------------- notebook 12: judge behaviour


def _corpus() -> pd.DataFrame:
    words = " ".join(f"word{i}" for i in range(400))
    return pd.DataFrame([{"story_id": f"s{i}", "category": cat, "tier": "", "title": f"Story {i}",
                          "author": f"Writer Number{i}", "year": 1900, "text": f"Paragraph one {words}.\n\n{words}"}
                         for i, cat in enumerate(["canonical", "canonical", "pulp", "pulp", "llm", "llm"])])


def _recognition(cfg):  # notebook 12: recognition.run_with_controls -> fabricated works + build_requests(items, knobs)
    from judgelab.behaviour import recognition

    knobs = cfg.knobs("behaviour")
    works = recognition.fabricated_works(knobs["fabricated"], knobs["seed"], [])
    return _requests(recognition.build_requests(recognition.fabricated_items(works), knobs)[1])


def _cloze(cfg):  # notebook 12: recognition.run_cloze -> cloze_requests(stories, knobs)
    from judgelab.behaviour import recognition

    return _requests(recognition.cloze_requests(_corpus().head(2), cfg.knobs("behaviour"))[1])


def _planted(cfg):  # notebook 12: planted.run_study -> planted_paths(...) + study_requests(...): every arm sent
    from judgelab.behaviour import planted, selection
    from judgelab.narrative.settings import judge_knobs

    knobs, jk = cfg.knobs("behaviour"), judge_knobs(cfg)
    paths = _paths(n_pairs=3)
    narratives = selection.planted_paths(paths, jk, knobs["planted_pairs"], knobs["planted_methods"])
    corpus = _corpus()
    built = planted.study_requests(corpus, corpus, narratives, jk, knobs, cfg, None)
    return {study: _requests(reqs) for study, (_, reqs) in built.items()}


def _length(cfg):  # notebook 12: length.run_study -> planted_items + length_requests(items, cfg, fractions, seeds)
    from judgelab.behaviour import length, selection

    knobs = cfg.knobs("behaviour")
    corpus = _corpus()
    items, ecfg = selection.planted_items(corpus, corpus, knobs, cfg, None)
    return _requests(length.length_requests(items, ecfg, knobs["length_fractions"], int(knobs["seeds"]))[1])


def _recognition_contrast(cfg):  # notebook 12: recognition.tables(probe, ..., knobs) -> claim_contrast(probe, b, s)
    from judgelab.behaviour import recognition

    knobs = cfg.knobs("behaviour")
    rng = np.random.default_rng(9)
    probe = pd.DataFrame([{"status": "ok", "mode": mode, "category": cat, "claimed": bool(rng.random() < 0.5),
                           "recognised": bool(rng.random() < 0.3)}
                          for mode in ("content", "title") for cat in ("canonical", "pulp", "llm", "fabricated")
                          for _ in range(24)])  # recognition.MIN_PER_GROUP per group: an interval
    return recognition.claim_contrast(probe, knobs["n_boot"], knobs["boot_seed"])


#: knob -> (another value, the consuming code's output as a function of the resolved configuration)
PROBES = {
    # notebook 07
    "narrative.collections.news.subset": (30, _landscapes),
    "narrative.collections.news.embedding": ("minilm", _landscapes),
    "narrative.collections.news.n_neighbors": (16, _landscapes),
    "narrative.collections.news.min_cluster_size": (4, _landscapes),
    "narrative.dense_limit": (10, _landscapes),
    "narrative.knn_k": (5, _sparse_landscapes),
    "narrative.path_seeds": (1, _landscapes),
    # notebook 08
    "narrative.collections.news.n_pairs": (5, _extracted),
    "narrative.temporal": (False, _extracted),
    "narrative.baseline_dates": ("inclusive", _extracted),
    "narrative.collections.news.alt_params": ("32/8", _alt_fit),
    "narrative.investigate_lengths": (True, _investigation),
    # notebook 09 (the requests built for the judge)
    "narrative_judges.max_tokens": ({"simple": 30, "cot": 110, "standard": 72, "complex": 104}, _judge_requests),
    "narrative_judges.reasoning_chars": (80, _judge_requests),
    # notebook 10
    "cost_ood.n_cost_pairs": (2, _cost_sample),
    "cost_ood.cost_modes": (["simple"], _cost_sample),
    "cost_ood.max_tokens": ({"simple": 30, "cot": 110, "standard": 72, "complex": 104}, _cost_sample),
    "cost_ood.reasoning_chars": (80, _cost_sample),
    "cost_ood.seed": (7, _cost_sample),
    "cost_ood.n_ood": (2, _ood_study),
    "cost_ood.n_perturbed": (1, _ood_study),
    "cost_ood.ood_modes": (["cot"], _ood_study),
    "cost_ood.k": (3, _ood_study),
    "cost_ood.off_topic_quantile": (0.5, _ood_study),
    "cost_ood.vispub_subset": (100, _joint_collection),
    "cost_ood.joint_neighbors": (8, _joint_collection),
    "cost_ood.joint_min_cluster_size": (3, _joint_collection),
    "cost_ood.n_splits": (3, _prediction),
    "cost_ood.n_estimators": (10, _prediction),
    "cost_ood.importance_boot": (4, _importance),
    # notebook 14
    "robustness.collection": ("nonesuch", _grid),  # smoke has one collection: another is refused (and below)
    "robustness.embeddings": (["precomputed", "minilm"], _grid),
    "robustness.params": (["32/8", "16/4"], _grid),
    "robustness.seeds": ([42, 43], _grid),
    "robustness.jsd_bases": (["e"], _grid),
    "robustness.strata": (["ours", "uniform"], _grid),
    "robustness.baseline_dates": (["strict"], _grid),
    "robustness.n_pairs": (5, _grid),
    "robustness.n_boot": (20, _grid_tables),
    "robustness.label_simulations": (50, _label_rates),
    # notebook 12 (the requests built for the judges, and the recognition contrast's intervals)
    "behaviour.recognition_max_tokens": (50, _recognition),
    "behaviour.guess_chars": (20, _recognition),
    "behaviour.temperature": (0.5, _recognition),
    "behaviour.seed": (8, _recognition),
    "behaviour.reasoning_effort": ("low", _recognition),
    "behaviour.fabricated": (2, _recognition),
    "behaviour.cloze_opening_words": (40, _cloze),
    "behaviour.cloze_words": (8, _cloze),
    "behaviour.cloze_max_tokens": (32, _cloze),
    "behaviour.planted_layer": ("L5", _planted),
    "behaviour.planted_per_category": ({"canonical": 1, "pulp": 1, "llm": 0}, _planted),
    "behaviour.planted_pairs": (2, _planted),
    "behaviour.planted_methods": (["maxcap", "random"], _planted),
    "behaviour.planted_modes": (["cot"], _planted),
    "behaviour.perturbations": ({"sage": ["raise-plain-start"], "narrative": ["raise-plain-start"]}, _planted),
    "behaviour.harden": (["sage", "narrative"], _planted),
    "behaviour.seeds": (1, _planted),
    "behaviour.length_fractions": ([0.5], _length),
    "behaviour.n_boot": (50, _recognition_contrast),
    "behaviour.boot_seed": (1, _recognition_contrast),
}

def _differs(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() != b.keys() or any(_differs(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) != len(b) or any(_differs(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return True
    return not _same(a, b)


@pytest.mark.parametrize("knob", sorted(PROBES))
def test_a_changed_knob_changes_its_output(knob, tmp_path):
    other, output = PROBES[knob]
    base = config.resolve(BASE, environ={})
    changed = probe_config(tmp_path, knob, other)
    assert changed[knob] != base[knob] and changed.setting(knob).source == "profile probe"
    assert [k for k in base.settings if base[k] != changed[k]] == [knob]  # only the probed knob differs
    assert _differs(_base_output(output), output(changed)), f"{knob}: {base[knob]!r} -> {other!r} changed nothing"


def test_the_robustness_collection_is_the_grid_s_and_an_unknown_one_is_refused(tmp_path):
    """``robustness.collection`` picks the grid's collection: smoke has one, so another value is
    refused by name (the paper profile's vispub is probed through its own grid)."""
    from judgelab.narrative.analyses import robustness

    with pytest.raises(ValueError, match="robustness.*collection.*nonesuch"):
        robustness.grid_settings(probe_config(tmp_path, "robustness.collection", "nonesuch"))
    paper = config.resolve("paper", environ={})
    assert robustness.grid_settings(paper).collection == paper["robustness.collection"]


def _paper_probe(tmp_path, table: str, name: str, value) -> config.Config:
    """A profile inheriting ``paper`` (the one profile with VisPub) with one knob of ``table`` changed."""
    from test_knobs import _toml

    from judgelab import settings_file

    path = tmp_path / name / "profiles.toml"
    path.parent.mkdir()
    path.write_text(settings_file.FILE.read_text(encoding="utf-8")
                    + f'\n[probe]\ninherits = "paper"\n[probe.{table}]\n{name} = {_toml(value)}\n', encoding="utf-8")
    return config.resolve("probe", environ={}, path=path)


def test_vispub_s_own_knobs_act(tmp_path):
    """The paper profile's VisPub knobs that smoke lacks: ``year_range`` (notebook 07's
    prepare_collection keeps those years) and the collection's own ``path_seeds`` (which overrides
    the profile-wide one)."""
    from test_narrative_collections import VISPUB_FILES, load_or_skip

    from judgelab.narrative.landscape import build
    from judgelab.narrative.settings import landscape_settings

    paper = config.resolve("paper", environ={})
    years = _paper_probe(tmp_path, "narrative.collections.vispub", "year_range", [2000, 2010])
    seeds = _paper_probe(tmp_path, "narrative.collections.vispub", "path_seeds", 3)
    assert landscape_settings(seeds).path_seeds("vispub") == 3 != landscape_settings(paper).path_seeds("vispub")

    def kept(cfg):  # the documents prepare_collection keeps, before any embedding (stopped at its door)
        knobs = landscape_settings(cfg).collection_knobs("vispub")
        with mock.patch.object(build, "embed_collection", lambda col, backend, **kw: col):
            return load_or_skip(lambda: build.prepare_collection("vispub", knobs), VISPUB_FILES).docs["date"]

    before, after = kept(paper), kept(years)
    assert len(after) < len(before) and after.dt.year.between(2000, 2010).all()


def test_a_year_range_on_news_is_refused_not_ignored(tmp_path):
    """``year_range`` filters VisPub; on news it would change nothing, so it is refused by name."""
    from judgelab.narrative.landscape import build
    from judgelab.narrative.landscape.collections import CollectionError
    from judgelab.narrative.settings import landscape_settings

    cfg = _paper_probe(tmp_path, "narrative.collections.news", "year_range", [2016, 2018])
    with pytest.raises(CollectionError, match="year_range.*vispub only"):
        build.prepare_collection("news", landscape_settings(cfg).collection_knobs("news"))
