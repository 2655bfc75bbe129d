"""Every knob acts: a knob of ``profiles.toml`` changed in a custom profile changes an output of the
code that consumes it, called as its notebook calls it with the run's resolved configuration
(:func:`judgelab.config.resolve` on a settings file with a ``[probe]`` profile), or it is declared
in ``[effects.cost_or_time]`` with the reason it changes no reported number.

The static test (``tests/test_profiles.py::test_every_knob_is_read_by_a_notebooks_code``) fails
on a knob no notebook's code reads; the probes here go further for the knobs listed in
:data:`PROBES` (the two SAGE thresholds have their own test, with Table 8 worked by hand:
``test_a_custom_convergence_threshold_changes_table_8``): each fails when its knob's value no
longer reaches the output (tried once: agents' temperatures spread over a fixed (0.3, 0.7) instead
of ``temperature_range``: that probe went red). Each probe is cheap (no notebook run).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab import config, settings_file

BASE = "smoke"  # the fastest profile: its bootstrap draws 200 resamples


def _toml(value) -> str:
    """A knob value as TOML (json's spelling is TOML's for numbers, strings, booleans and arrays)."""
    if isinstance(value, dict):  # an inline table
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def probe_config(tmp_path: Path, knob: str, value, notebook: str | None = None) -> config.Config:
    """The configuration of a profile that inherits :data:`BASE` and sets ``knob`` to ``value``."""
    study, _, rest = knob.partition(".")
    *tables, name = rest.split(".")
    path = tmp_path / "profiles.toml"
    path.write_text(settings_file.FILE.read_text(encoding="utf-8")
                    + f'\n[probe]\ninherits = "{BASE}"\n[probe.{".".join([study, *tables])}]\n{name} = {_toml(value)}\n',
                    encoding="utf-8")
    return config.resolve("probe", notebook, environ={}, path=path)


# ---------------------------------------------------------------- the consuming code, as notebooks call it

def _agents(cfg):  # notebook 09: judge_knobs(run.config) -> agents_table(...)
    from judgelab.narrative.judges.run import agents_table
    from judgelab.narrative.settings import judge_knobs

    k = judge_knobs(cfg)
    return agents_table(["news"], k["k"], k["temperature_range"], k["seed"], agent_design="temperature")


def _judged_pairs(cfg):  # notebook 09: judges.select_pairs(all_paths, knobs["n_pairs"], knobs["seed"])
    from judgelab.narrative.judges.run import select_pairs
    from judgelab.narrative.settings import judge_knobs

    k = judge_knobs(cfg)
    paths = pd.DataFrame([{"collection": "news", "pair_id": p, "method": m} for p in range(12)
                          for m in ("max_capacity", "random")])
    return sorted(select_pairs(paths, k["n_pairs"], k["seed"])["pair_id"].unique().tolist())


def _preview(cfg):  # notebook 09: judges.prompt_preview(titles, collection, knobs["modes"], knobs["explanations"])
    from judgelab.narrative.judges.run import prompt_preview
    from judgelab.narrative.settings import judge_knobs

    k = judge_knobs(cfg)
    return prompt_preview(["A storm", "The harbour closes", "Boats return"], "news", k["modes"], k["explanations"])


def _landscape_seeds(cfg):  # notebook 07: the UMAP seeds its landscape and sensitivity run on
    from judgelab.narrative.settings import landscape_settings

    return landscape_settings(cfg).seeds


def _human_stories(cfg):  # notebook 11: stories judged per data set
    from judgelab.human.appendix import stories_per_dataset

    return stories_per_dataset(cfg.knobs("human"), ["confederacy", "artifice"])


def _jsd(cfg):  # notebook 07: landscape_settings(...).jsd_base -> the coherence's log base
    from judgelab.narrative.landscape.coherence import js_distance_block
    from judgelab.narrative.settings import landscape_settings, log_base

    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    return js_distance_block(p, p[::-1], base=log_base(landscape_settings(cfg).jsd_base))


def _table08(cfg):  # notebook 05: the thresholds and the bootstrap knobs of the resolved configuration
    from sage_synthetic import evaluation_records, rows_from_records

    from judgelab.sage.analysis import paper_tables

    rows = pd.concat([rows_from_records(evaluation_records(f"s{i}", "L4", "content",
                                                           {4: [3.0] * 4, 5: [3.0 + 0.1 * i, 3.2, 3.2, 3.4]},
                                                           validator_blind=[3.0 + 0.2 * i] * 4)) for i in range(4)],
                     ignore_index=True)
    boot = cfg.knobs("sage_bootstrap")
    return paper_tables.table08_reliability(rows, None, convergence_threshold=cfg["sage.convergence_threshold"],
                                            agreement_threshold=cfg["sage.agreement_threshold"],
                                            n_boot=boot["n_boot"], seed=boot["boot_seed"])


def _validator_schema(cfg):  # notebooks 02-04: the validator's reply schema from the [sage] knobs
    from judgelab.sage.protocol.schemas import validator_schema

    s = cfg.knobs("sage")
    return json.dumps(validator_schema("L4", "review", s["evidence_chars"], s["note_chars"]).model_json_schema(),
                      sort_keys=True)


def _cue_test(cfg):  # notebook 01: surface_cues.audit's classifier with the profile's permutations
    from judgelab.corpus.surface_cues import classify_cv

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(20, 2)), np.repeat([0, 1], 10)
    return classify_cv(x, y, n_permutations=cfg.knobs("surface_cues")["n_permutations"], seed=0, n_boot=10)["p_perm"]


#: knob -> (another value, the consuming code's output as a function of the resolved configuration)
PROBES = {
    "narrative_judges.temperature_range": ([0.1, 0.9], _agents),
    "narrative_judges.k": (3, _agents),
    "narrative_judges.seed": (7, _agents),
    "narrative_judges.n_pairs": (5, _judged_pairs),
    "narrative_judges.modes": (["simple", "cot"], _preview),
    "narrative_judges.explanations": (True, _preview),
    "narrative.jsd_base": (2, _jsd),
    "narrative.seed": (7, _landscape_seeds),
    "narrative.sensitivity_seeds": (3, _landscape_seeds),
    "human.n_stories": ({"confederacy": 1, "artifice": 1}, _human_stories),
    "sage_bootstrap.n_boot": (50, _table08),
    "sage_bootstrap.boot_seed": (1, _table08),
    "sage.evidence_chars": (16, _validator_schema),
    "sage.note_chars": (48, _validator_schema),
    "surface_cues.n_permutations": (4, _cue_test),
}


_BASE_OUTPUTS: dict = {}


def _base_output(output):
    """``output`` of the base profile, computed once per module run (several knobs share a probe)."""
    if output not in _BASE_OUTPUTS:
        _BASE_OUTPUTS[output] = output(config.resolve(BASE, environ={}))
    return _BASE_OUTPUTS[output]


def _same(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return a.shape == b.shape and a.astype(str).equals(b.astype(str))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.allclose(a, b)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b) or (math.isnan(a) and math.isnan(b))
    return a == b


@pytest.mark.parametrize("knob", sorted(PROBES))
def test_a_changed_knob_changes_its_output(knob, tmp_path):
    other, output = PROBES[knob]
    base = config.resolve(BASE, environ={})
    changed = probe_config(tmp_path, knob, other)
    assert changed[knob] != base[knob] and changed.setting(knob).source == "profile probe"
    # only the probed knob differs between the two configurations
    assert [k for k in base.settings if base[k] != changed[k]] == [knob]
    assert not _same(_base_output(output), output(changed)), f"{knob}: {base[knob]!r} -> {other!r} changed nothing"


def test_cost_or_time_knobs_say_why_and_exist():
    declared = settings_file.load()["effects"]["cost_or_time"]
    keys = set(config.resolve(BASE, environ={}).settings)
    assert declared and set(declared) <= keys
    assert all(isinstance(why, str) and len(why) > 20 for why in declared.values())
    assert not set(declared) & set(PROBES)  # a knob that changes an output is not "cost or time only"


def test_every_knob_is_probed_or_declared_cost_or_time():
    """The whole register of knobs: each one of the base profile is probed here or in the study
    files (``test_knobs_sage``, ``test_knobs_narrative``), or declared cost-or-time only; a new
    knob with neither fails, and so does a probe of a knob that no longer exists."""
    import test_knobs_narrative
    import test_knobs_sage

    probed = set(PROBES) | set(test_knobs_sage.PROBES) | set(test_knobs_narrative.PROBES)
    declared = set(settings_file.load()["effects"]["cost_or_time"])
    keys = set(config.resolve(BASE, environ={}).settings)
    assert not keys - probed - declared, f"knobs neither probed nor declared cost-or-time: {sorted(keys - probed - declared)}"
    assert probed <= keys and not probed & declared
