"""Every knob acts, SAGE's side: each knob of ``[sage]``, ``[sage_analysis]``, ``[sage_bootstrap]``,
``[sage_features]``, ``[surface_cues]``, ``[independence]``, ``[human]`` and ``[claims]`` changed in
a profile that inherits ``smoke`` (:func:`test_knobs.probe_config`) changes the output of the code
that consumes it, called as its notebook calls it with the run's resolved configuration.

The output is what the notebook reports, or the requests the judge would be sent: the SAGE runner
(notebooks 02-04 through :class:`judgelab.sage.report.LayerReport`, notebook 11's SAGE run) and
the holistic judge (notebook 11) send their requests to :class:`Recorder`, a gateway that keeps
each request (messages, reply schema, sampling, tags) and answers every call with a failure, so
no model is involved and each evaluation stops after its first turn per track.

Knock-outs tried once, each red: notebooks 02-04 reading ``[sage]`` by the profile's name instead
of the run's resolved configuration (``LayerReport._profile`` returning ``run.profile``): the 14
probes of the runner; the runner's ``EvalConfig`` built without ``temperature``: that probe ("changed
nothing"); the anonymous-author run without its guard for an empty selection (an empty story list
means "the profile's draw" to the runner): the ``anonymous_per_category`` probe.

The two SAGE thresholds also have a test with Table 8 worked by hand
(``tests/test_profiles.py::test_a_custom_convergence_threshold_changes_table_8``).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgelab import config, settings_file
from test_knobs import BASE, _same, _table08, _toml, probe_config

# ---------------------------------------------------------------- a gateway that records

class Recorder:
    """A stand-in gateway: keeps every request the runner builds, answers each with a failure."""

    backend_name, model_name, count_tokens = "recorder", "recorder", None

    def __init__(self):
        self.requests: list = []

    def _failed(self, req):
        from judgelab.gateway import ChatResult

        self.requests.append(req)
        return ChatResult(status="failed", error="recorded, not sent", backend="recorder", model="recorder",
                          sampling=req.sampling, tags=req.tags)

    def chat(self, req):
        return self._failed(req)

    def run_batch(self, reqs, concurrency=None, desc=None):
        return [self._failed(r) for r in reqs]

    def map(self, fn, items, concurrency=None, desc=None):
        return [fn(it) for it in items]

    def sent(self) -> list[str]:
        """Every request as the judge would get it: messages, reply schema, sampling, tags."""
        return [json.dumps({"messages": [m.content for m in r.messages], "schema": r.schema.model_json_schema(),
                            "sampling": r.sampling.model_dump(), "tags": r.tags}, sort_keys=True, default=str)
                for r in self.requests]


# ---------------------------------------------------------------- synthetic inputs

_WORDS = ("the ferry left before dawn and the lamps along the quay went out one by one while she counted "
          "the crates her brother had promised to carry home across the water").split()


def _text(i: int, n_words: int, title: str) -> str:
    rng = np.random.default_rng(i)
    paras = [" ".join(rng.choice(_WORDS, 60)).capitalize() + f". They spoke of {title.lower()} again."
             for _ in range(n_words // 66)]
    return "\n\n".join(paras)


def _corpus() -> pd.DataFrame:
    """Seven stories (3 canonical, 2 pulp, 2 LLM) of ~1,300 words: longer than the smoke budget of
    400 tokens, each repeating its two-word title in the body (what the title mask masks)."""
    recs = []
    for i, (cat, tier) in enumerate([("canonical", "")] * 3 + [("pulp", "")] * 2 + [("llm", "high"), ("llm", "low")]):
        title = ["Silver Harbour", "Copper Bell", "Iron Gate", "Glass River", "Paper Moon", "Stone Garden",
                 "Velvet Storm"][i]
        recs.append({"story_id": f"k{i}", "category": cat, "tier": tier, "title": title,
                     "author": f"Writer Q{'abcdefg'[i]}zzly", "text": _text(i, 1300, title), "in_range": True,
                     "words": 1300})
    return pd.DataFrame(recs)


@pytest.fixture(autouse=True)
def _output_root(tmp_path, monkeypatch):
    """Notebook 02's interim files go to a temporary output root."""
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "out"))


# ---------------------------------------------------------------- the consuming code, as notebooks call it

def _sage_requests(cfg):  # notebooks 02-04: layer_notebook(run, layer) -> LayerReport.run(), main and anonymous runs
    from judgelab.run import Run
    from judgelab.sage.protocol.modes import ContextTooLongError
    from judgelab.sage.report import LayerReport

    gw = Recorder()
    run = Run("02_l4_cultural", cfg.profile, config=cfg)
    try:
        LayerReport.open("L4", run, gateway=gw, corpus=_corpus()).run()
    except ContextTooLongError:  # a text the context policy refuses: the run stops before any call
        return "refused: too long for the context"
    return gw.sent()


def _l123(cfg):  # notebook 01: l123.compute_l123_features(corpus, profile=run.config)
    from judgelab.sage.layers import features

    class Embedder:  # the embedded MiniLM's place (its load alone would take the file's time budget)
        def embed(self, docs):
            return np.array([[len(d), d.count("e") + 1.0, 1.0] for d in docs])

    # the human stories (3 canonical, 2 pulp; the smoke profile's 2 per category: 4), their first 1,500 characters
    small = _corpus().query("category != 'llm'").assign(text=lambda d: d["text"].str.slice(0, 1500))
    return features.compute_l123_features(small, embedder=Embedder(), profile=cfg)


def _cue_sensitivity(cfg):  # notebook 01: the audit's sensitivity, run only when sensitivity_replicates > 0
    from judgelab.corpus import surface_cues

    replicates = cfg.knobs("surface_cues")["sensitivity_replicates"]
    if not replicates:
        return "not run"
    # the smallest design it accepts: 5 LLM stories and 5 more human ones
    texts = pd.DataFrame({"story_id": [f"c{i}" for i in range(15)], "category": ["canonical"] * 10 + ["llm"] * 5,
                          "text": [_text(20 + i, 300, "the quay") for i in range(15)]})
    return surface_cues.sensitivity_table(texts, seed=0, replicates=replicates,
                                          doses=surface_cues.CUE_DOSES[:1]).to_csv()  # one dose: the knob's effect


_INTERIM: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _synthetic_rows(tmp_path_factory):
    """Notebooks 02-04's interim rows, synthetic: 3 stories per category, every layer, written once."""
    from sage_synthetic import write_synthetic_interim

    _INTERIM["dir"] = tmp_path_factory.mktemp("interim")
    write_synthetic_interim(_INTERIM["dir"], {"canonical": 3, "pulp": 3, "llm": 3}, seed=5)


def _synthetic_interim():
    return _INTERIM["dir"]


def _loaded_layers(cfg):  # notebooks 05, 06: evaluations.load_evaluations(run.config["sage_analysis.layers"])
    from pathlib import Path

    from judgelab.sage.analysis import evaluations

    ev = evaluations.load_evaluations(list(cfg["sage_analysis.layers"]), Path(_synthetic_interim()))
    return sorted(ev.rows["layer"].unique())


def _genre_units(cfg):  # notebook 06: scores.observation_units(scores.story_scores(rows), GENRE_UNIT)
    from pathlib import Path

    from judgelab.sage.analysis import evaluations, scores

    rows = evaluations.load_evaluations(["L4"], Path(_synthetic_interim())).rows
    return scores.observation_units(scores.story_scores(rows), cfg["sage_analysis.genre_unit"])


def _dimension_table(cfg):  # notebook 06: paper_tables.dimension_discrimination_table(rows, DIMENSION_UNIT)
    from pathlib import Path

    from judgelab.sage.analysis import evaluations, paper_tables

    rows = evaluations.load_evaluations(["L4"], Path(_synthetic_interim())).rows
    return paper_tables.dimension_discrimination_table(rows, cfg["sage_analysis.dimension_unit"])


def _l123_accuracy(cfg):  # notebook 06: indep.classify_category_cv(features, n_permutations=...)
    from judgelab.sage.analysis import independence as indep

    rng = np.random.default_rng(4)
    feats = pd.DataFrame(rng.normal(size=(12, 3)), columns=["l1_a", "l2_b", "l3_c"])
    feats.insert(0, "category", ["canonical", "pulp", "llm"] * 4)
    feats.insert(0, "story_id", [f"s{i}" for i in range(12)])
    return indep.classify_category_cv(feats, n_permutations=cfg.knobs("independence")["n_permutations"])


def _human_stories() -> pd.DataFrame:
    """Notebook 11's stories as :func:`judgelab.human.appendix.stories_for` returns them: four
    stories of two sources (what ``selection`` and ``selection_seed`` draw from)."""
    return pd.DataFrame({"story": [f"h{i}" for i in range(4)], "source": ["m0", "m1", "m0", "m1"],
                         "words": [300, 200, 100, 400], "dataset": "confederacy", "title": [f"Walk {i}" for i in range(4)],
                         "text": [_text(10 + i, 300, "a walk") for i in range(4)]})


def _human_selection(cfg):  # notebook 11: appendix.stories_for(n_stories, knobs) draws with select_stories
    from judgelab.human import appendix

    k = cfg.knobs("human")
    return appendix.select_stories(_human_stories(), 2, k["selection"], k["selection_seed"])["story"].tolist()


def _holistic_requests(cfg):  # notebook 11: appendix.run_holistic(gw, stories, knobs, PROFILE)
    from judgelab.human import appendix

    gw = Recorder()
    appendix.run_holistic(gw, _human_stories(), cfg.knobs("human"), cfg.profile)
    return gw.sent()


def _human_sage_requests(cfg):  # notebook 11: appendix.run_sage(gw, stories, knobs, run.config, enabled=...)
    from judgelab.human import appendix

    gw = Recorder()
    out = appendix.run_sage(gw, _human_stories(), cfg.knobs("human"), cfg, enabled=cfg["human.run_sage"])
    return "not run" if out is None else gw.sent()


def _human_comparison(cfg):  # notebook 11: appendix.comparison(scores, human, ceiling, knobs, ...): the intervals
    from judgelab.human import appendix
    from judgelab.human.compare import CriterionMap

    rng = np.random.default_rng(6)
    quality = rng.normal(size=12)
    # 12 stories, two ratings each by raters who rate one story (no rater's leave-one-out: only the
    # rank correlations' intervals are bootstrapped)
    tidy = pd.DataFrame([("syn", f"st{i:02d}", f"m{i % 3}", "overall", f"r{i}_{r}", q + rng.normal(0, 0.5))
                         for i, q in enumerate(quality) for r in range(2)],
                        columns=["dataset", "story", "source", "criterion", "rater", "value"])
    scores = pd.DataFrame({"dataset": "syn", "story": [f"st{i:02d}" for i in range(12)], "measure": "oracle",
                           "score": quality + rng.normal(0, 1.0, 12)})
    tab = appendix.comparison(scores, tidy, None, cfg.knobs("human"), backend="b", model="m", profile=cfg.profile,
                              mapping=[CriterionMap("syn", "oracle", "overall", "probe")])
    # the computed intervals only (the table also echoes n_boot, ci and seed)
    return tab[[c for c in tab.columns if c.endswith(("_lo", "_hi"))]]


def _powered_claim():
    from judgelab.claims import register, scorecard

    return next(c for c in register.load() if c.kind == "mean_diff" and c.power
                and scorecard.power_model(c, c.paper_value())[0] is not None)


def _claim_power(cfg):  # notebook 13: scorecard.scorecard(claims, ..., knobs) -> claim_power per claim
    from judgelab.claims import scorecard

    c = _powered_claim()
    return scorecard.claim_power(c, c.paper_value(), cfg.knobs("claims"))


def _operating(cfg):  # notebook 13: scorecard.operating_table(claims, n_sim=..., seed=knobs["power_seed"])
    from judgelab.claims import scorecard

    k = cfg.knobs("claims")
    return scorecard.operating_table([_powered_claim()], n_sim=k["operating_simulations"], seed=k["power_seed"])


#: knob -> (another value, the consuming code's output as a function of the resolved configuration)
PROBES = {
    # notebooks 02-04: the requests SAGE's judge is sent
    "sage.per_category": ({"canonical": 2, "pulp": 0, "llm": 0}, _sage_requests),
    "sage.modes": (["content"], _sage_requests),
    "sage.max_text_tokens": (300, _sage_requests),
    "sage.context_policy": ("error", _sage_requests),
    "sage.mask_title_in_body": (True, _sage_requests),
    "sage.anonymous_author": (True, _sage_requests),
    "sage.anonymous_author_sensitivity": (["L5"], _sage_requests),
    "sage.anonymous_per_category": ({"canonical": 0, "pulp": 0, "llm": 0}, _sage_requests),
    "sage.max_tokens": (300, _sage_requests),
    "sage.reasoning_chars": (24, _sage_requests),
    "sage.temperature": (0.5, _sage_requests),
    "sage.seed": (8, _sage_requests),
    "sage.selection_seed": (12, _sage_requests),
    "sage.reasoning_effort": ("low", _sage_requests),
    # notebook 05: Table 8
    "sage.convergence_threshold": (0.05, _table08),
    "sage.agreement_threshold": (0.1, _table08),
    # notebook 01
    "sage_features.max_per_category": (1, _l123),
    "sage_features.embed": (True, _l123),
    "surface_cues.sensitivity_replicates": (1, _cue_sensitivity),
    # notebooks 05, 06
    "sage_analysis.layers": (["L4"], _loaded_layers),
    "sage_analysis.genre_unit": ("story", _genre_units),
    "sage_analysis.dimension_unit": ("story_mode", _dimension_table),
    "independence.n_permutations": (2, _l123_accuracy),
    # notebook 11
    "human.run_sage": (False, _human_sage_requests),
    "human.sage_layer": ("L4", _human_sage_requests),
    "human.sage_mode": ("title", _human_sage_requests),
    "human.sage_max_stories": (2, _human_sage_requests),
    "human.selection": ("random", _human_selection),
    "human.selection_seed": (3, _human_selection),
    "human.holistic_max_tokens": (24, _holistic_requests),
    "human.holistic_reason_chars": (40, _holistic_requests),
    "human.holistic_reasoning_effort": ("low", _holistic_requests),
    "human.temperature": (0.5, _holistic_requests),
    "human.seed": (8, _holistic_requests),
    "human.n_boot": (60, _human_comparison),
    "human.ci": (0.8, _human_comparison),
    "human.boot_seed": (5, _human_comparison),
    # notebook 13
    "claims.power_simulations": (60, _claim_power),
    "claims.power_n_max": (12, _claim_power),
    "claims.power_seed": (5, _claim_power),
    "claims.operating_simulations": (20, _operating),
}

#: knob -> the other knobs (and values) both configurations share: a knob that acts only given
#: another's value (a draw's seed acts when the draw is random; the smoke profile draws the shortest)
GIVEN = {
    "human.selection_seed": {"human.selection": "random"},
}


def _section(name: str, inherits: str, knobs: dict) -> str:
    out = f'\n[{name}]\ninherits = "{inherits}"\n'
    for knob, value in knobs.items():
        study, _, key = knob.partition(".")
        out += f"[{name}.{study}]\n{key} = {_toml(value)}\n"
    return out


def _configs(tmp_path, knob: str, other):
    """(base, changed): :data:`BASE` and the same with ``knob`` = ``other`` (both with :data:`GIVEN`'s knobs)."""
    given = GIVEN.get(knob)
    if not given:
        return config.resolve(BASE, environ={}), probe_config(tmp_path, knob, other)
    path = tmp_path / "profiles.toml"
    path.write_text(settings_file.FILE.read_text(encoding="utf-8") + _section("given", BASE, given)
                    + _section("probe", "given", {knob: other}), encoding="utf-8")
    return config.resolve("given", environ={}, path=path), config.resolve("probe", environ={}, path=path)


_BASE_OUTPUTS: dict = {}


def _base_output(output, base):
    """``output`` of the base profile, computed once per module run (several knobs share a probe)."""
    if base.profile != BASE:
        return output(base)
    if output not in _BASE_OUTPUTS:
        _BASE_OUTPUTS[output] = output(base)
    return _BASE_OUTPUTS[output]


@pytest.mark.parametrize("knob", sorted(PROBES))
def test_a_changed_knob_changes_its_output(knob, tmp_path):
    other, output = PROBES[knob]
    base, changed = _configs(tmp_path, knob, other)
    assert changed[knob] != base[knob]
    # only the probed knob differs between the two configurations
    assert [k for k in base.settings if base[k] != changed[k]] == [knob]
    assert not _same(_base_output(output, base), output(changed)), f"{knob}: {base[knob]!r} -> {other!r} changed nothing"


def test_the_probes_cover_every_sage_side_knob():
    """Every knob of the studies above is probed here or in tests/test_knobs.py, or declared cost or time only."""
    from test_knobs import PROBES as FIRST

    studies = ("sage", "sage_analysis", "sage_bootstrap", "sage_features", "surface_cues", "independence",
               "human", "claims")
    keys = {k for k in config.resolve(BASE, environ={}).settings if k.split(".")[0] in studies}
    declared = set(settings_file.load()["effects"]["cost_or_time"])
    assert keys - set(PROBES) - set(FIRST) - declared == set()
    assert not set(PROBES) & declared
