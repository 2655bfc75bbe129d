"""Notebook 12's requests (judge behaviour), built by the code that sends them: recognition and
continuation probes, planted instructions and the length intervention, exact; the narrative
planted instructions on notebook 08's paths, else on :mod:`judgelab.estimate.narrative`'s size
model. The unperturbed requests are notebooks 02's and 09's (cache hits), not counted again;
one-turn requests count no prefix reuse.
"""
from __future__ import annotations

import pandas as pd

from judgelab import config
from judgelab.behaviour import length, planted, recognition, selection
from judgelab.estimate import narrative as narr_estimate
from judgelab.estimate.counting import TokenCounter
from judgelab.estimate.sage import load_corpus
from judgelab.narrative import settings as narrative_settings


def _rows(meta: list[dict], reqs: list, counter: TokenCounter, track: str) -> list[dict]:
    rows = []
    for m, req in zip(meta, reqs):
        first = not m.get("seed_index")
        if first and ((m.get("arm") == "baseline" and not m.get("hardened")) or m.get("fraction") == 1.0):
            continue  # notebook 02's / 09's own request (at the first seed): a cache hit
        rows.append({"notebook": "12", "study": "behaviour", "layer": m.get("layer", ""), "mode": m.get("mode", "content"),
                     "item": f"{m.get('item', m.get('story_id'))}:{m.get('perturbation', m.get('fraction', 'probe'))}"
                             f"{':hardened' if m.get('hardened') else ''}{'' if first else ':seed' + str(m['seed_index'])}",
                     "track": track, "round": 1, "first_round": True, **counter.one_turn(req)})
    return rows


def _narrative_paths(cfg: config.Config, knobs: dict, judge_knobs: dict) -> tuple[pd.DataFrame, str]:
    found = narr_estimate.real_paths(cfg.profile)
    if found is not None:
        return (selection.planted_paths(found, judge_knobs, knobs["planted_pairs"], knobs["planted_methods"]),
                "notebook 08's paths")
    parts = []
    for name in cfg.knobs("narrative")["collections"]:
        paths = narr_estimate.modelled_paths(name, knobs["planted_pairs"], "typical",
                                             narr_estimate.collection_titles(name), judge_knobs["seed"])
        parts.append(paths[paths["method"].isin(list(knobs["planted_methods"]))])
    return pd.concat(parts, ignore_index=True), "size model (typical Table 1 lengths)"


def behaviour_calls(profile: config.Config | str, counter: TokenCounter) -> tuple[pd.DataFrame, str]:
    """Notebook 12's fresh requests for the configuration ``profile`` (:func:`judgelab.config.of`)
    and a note on how they were built."""
    cfg_run = config.of(profile)
    knobs = cfg_run.knobs("behaviour")
    corpus = load_corpus()
    stories = selection.sage_stories(corpus, cfg_run)
    items, _ = selection.sage_items(corpus, stories, "L4", cfg_run, ("content", "title"), counter.text_counter())
    works = recognition.fabricated_works(knobs["fabricated"], knobs["seed"], corpus["title"])
    meta, reqs = recognition.build_requests(items + recognition.fabricated_items(works), knobs)
    rows = _rows(meta, reqs, counter, "recognition")
    meta, reqs = recognition.cloze_requests(stories, knobs)
    rows += _rows(meta, reqs, counter, "cloze")
    judge_knobs = narrative_settings.judge_knobs(cfg_run)
    paths, how = _narrative_paths(cfg_run, knobs, judge_knobs)
    built = planted.study_requests(corpus, stories, paths, judge_knobs, knobs, cfg_run, counter.text_counter())
    rows += _rows(*built["sage"], counter, "planted_sage") + _rows(*built["narrative"], counter, "planted_narrative")
    p_items, cfg = selection.planted_items(corpus, stories, knobs, cfg_run, counter.text_counter())
    rows += _rows(*length.length_requests(p_items, cfg, knobs["length_fractions"], int(knobs["seeds"])), counter, "length")
    return pd.DataFrame(rows), (f"exact: recognition {len(items)} probes + {len(works)} invented works, "
                                f"planted SAGE and length {len(p_items)} stories; "
                                f"planted narrative on {how}; baselines = 02/09's cached calls, not counted")
