"""The narrative judges' requests (notebook 09; notebook 10's cost sample and OOD judges), built by
:func:`judgelab.narrative.judges.run.build_requests` with the profile's knobs. A request lists the
narrative's document titles, so its size depends on notebook 08's paths:

* **real inputs**: ``narr_paths.parquet`` written by notebook 08 in the profile estimated (a demo
  run's paths say nothing of the paper's), selected as notebook 09 does: every request exact;
* **size model**: otherwise each collection's pairs get a max-capacity and a random path of the
  paper's Table 1 minimum / mean / maximum length (``PAPER_TABLE1``: low / typical / high), titles
  drawn, seeded, from the collection. The report says which was used.

Notebook 10 always uses the size model (``[<profile>.cost_ood]``): the cost sample (K = 1, on
VisPub when the profile has it) and the OOD and perturbed narratives with notebook 09's K.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab import config
from judgelab.estimate.counting import TokenCounter, reply
from judgelab.narrative.judges import run as judges
from judgelab.narrative import settings as narrative_settings
from judgelab.narrative.paths.paper_values import PAPER_TABLE1, PAPER_TABLE1_SOURCE

BOUNDS = {"low": "min", "typical": "mean", "high": "max"}
METHODS = ("maxcap", "random")


def paths_profile() -> str | None:
    """The ``PROFILE`` of notebook 08's executed notebook under the output root, or None."""
    import json

    from judgelab import paths

    found = sorted(paths.executed_dir().glob("08_*.ipynb"))
    if not found:
        return None
    try:
        meta = json.loads(found[0].read_text(encoding="utf-8"))["metadata"]
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{found[0]}: not a readable executed notebook ({exc})") from exc
    return (meta.get("papermill", {}).get("parameters") or {}).get("PROFILE")


def real_paths(profile: str | None = None) -> pd.DataFrame | None:
    """Notebook 08's paths when they exist and were made in ``profile`` (or it is not recorded)."""
    return _paths_for(profile)[0]


def _paths_for(profile: str | None) -> tuple[pd.DataFrame | None, str | None]:
    """(:func:`real_paths`, the profile notebook 08 made them in): its executed notebook read once."""
    from judgelab import interim, paths

    if not (paths.interim_dir() / "narr_paths.parquet").exists():
        return None, None
    made_in = paths_profile()
    if profile is not None and made_in not in (None, profile):
        return None, made_in
    return interim.read("narr_paths"), made_in


def collection_titles(name: str) -> list[str]:
    """The titles of a collection's documents (notebook 07's interim file, else the raw data)."""
    from judgelab import interim, paths

    if (paths.interim_dir() / f"narr_documents_{name}.parquet").exists():
        return interim.read(f"narr_documents_{name}")["title"].astype(str).tolist()
    from judgelab.narrative.landscape import collections

    col = collections.load_news(with_embeddings=False) if name == "news" else collections.load_collection(name)
    return col.docs["title"].astype(str).tolist()


def _length(collection: str, method: str, bound: str) -> int:
    stats = PAPER_TABLE1.get((collection, method)) or PAPER_TABLE1[("news", method)]
    return max(2, int(round(stats[BOUNDS[bound]])))


def modelled_paths(collection: str, n_pairs: int, bound: str, titles: list[str], seed: int = 0,
                   methods=METHODS, pair_prefix: str = "") -> pd.DataFrame:
    """Stand-in paths: ``n_pairs`` x ``methods`` of Table 1's length at ``bound``, seeded titles."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(int(n_pairs)):
        for method in methods:
            n = _length(collection, method, bound)
            pick = rng.choice(len(titles), size=min(n, len(titles)), replace=False)
            rows.append({"collection": collection, "pair_id": f"{pair_prefix}{p}", "method": method,
                         "titles": [titles[i] for i in pick], "length": n})
    return pd.DataFrame(rows)


def request_rows(paths: pd.DataFrame, knobs: dict, counter: TokenCounter, notebook: str, k=None,
                 modes=None) -> list[dict]:
    """One row per judge request of ``paths`` (input tokens exact for these paths)."""
    if paths.empty:
        return []
    agents = {c: judges.agent_spread(narrative_settings.k_for(c, knobs["k"] if k is None else k),
                                     knobs["temperature_range"], knobs["seed"])
              for c in paths["collection"].unique()}
    meta, reqs = judges.build_requests(paths, agents, modes or knobs["modes"], max_tokens=knobs["max_tokens"],
                                       explanations=knobs["explanations"], reasoning_chars=knobs["reasoning_chars"])
    rows = []
    for m, req in zip(meta, reqs):
        msgs = [{"role": x.role, "content": x.content} for x in req.messages]
        rows.append({"notebook": notebook, "study": "narrative", "layer": "", "mode": m["mode"],
                     "item": f"{m['collection']}:{m['pair_id']}:{m['method']}", "track": "judge",
                     "round": 1, "first_round": True, "agent": m["agent"], "max_tokens": req.sampling.max_tokens,
                     "reasoning_effort": req.sampling.reasoning_effort,
                     "input": counter.request(msgs, req.schema),
                     "reply_min": counter.text(reply(req.schema, "min")[0]),
                     "reply_max": counter.text(reply(req.schema, "max")[0])})
    return rows


def _bounded(rows_by_bound: dict[str, list[dict]]) -> pd.DataFrame:
    """Rows of the low / high path-size runs side by side (same requests, different sizes)."""
    lo, hi = pd.DataFrame(rows_by_bound["low"]), pd.DataFrame(rows_by_bound["high"])
    if lo.empty:
        return lo
    out = lo.drop(columns=["input"]).copy()
    out["input_min"], out["input_max"] = lo["input"].to_numpy(), hi["input"].to_numpy()
    out["input_typical"] = pd.DataFrame(rows_by_bound["typical"])["input"].to_numpy()
    out["cached_min"] = out["cached_max"] = 0  # one-turn prompts far below OpenAI's 1,024-token floor
    return out


def judge_calls(profile: config.Config | str, counter: TokenCounter, n_pairs: int | None = None) -> tuple[pd.DataFrame, str]:
    """Notebook 09's requests and how their inputs were known (``profile``: the configuration
    priced, :func:`judgelab.config.of`); ``n_pairs``: a sized sample."""
    cfg = config.of(profile)
    profile = cfg.profile
    knobs = narrative_settings.judge_knobs(cfg, n_pairs=n_pairs)
    found, made_in = _paths_for(profile)
    if found is not None:
        chosen = judges.select_pairs(found, knobs["n_pairs"], knobs["seed"])
        rows = request_rows(chosen, knobs, counter, "09")
        out = _bounded({b: rows for b in BOUNDS})
        return out, f"exact: {len(chosen)} paths of notebook 08 (narr_paths.parquet)"
    cols = cfg.knobs("narrative")["collections"]
    by_bound: dict[str, list[dict]] = {b: [] for b in BOUNDS}
    for name, ccfg in cols.items():
        n = ccfg["n_pairs"] if knobs["n_pairs"] is None else min(ccfg["n_pairs"], knobs["n_pairs"])
        titles = collection_titles(name)
        for b in BOUNDS:
            by_bound[b] += request_rows(modelled_paths(name, n, b, titles, knobs["seed"]), knobs, counter, "09")
    why = (f"notebook 08's paths are from profile {made_in}" if made_in not in (None, profile)
           else "notebook 08 has not run")
    return _bounded(by_bound), (f"size model: {why}; pairs per collection from the profile, "
                                f"path lengths min/mean/max of {PAPER_TABLE1_SOURCE}, titles drawn from the collections")


def cost_ood_calls(profile: config.Config | str, counter: TokenCounter) -> tuple[pd.DataFrame, str]:
    """Notebook 10's judge requests from its knobs (size model; see the module docstring)."""
    cfg = config.of(profile)
    k10 = cfg.knobs("cost_ood")
    knobs = {**narrative_settings.judge_knobs(cfg), "max_tokens": k10["max_tokens"], "reasoning_chars": k10["reasoning_chars"]}
    cols = list(cfg.knobs("narrative")["collections"])
    cost_coll = "vispub" if "vispub" in cols else cols[0]
    titles = {c: collection_titles(c) for c in cols}
    by_bound: dict[str, list[dict]] = {b: [] for b in BOUNDS}
    for b in BOUNDS:
        sample = modelled_paths(cost_coll, k10["n_cost_pairs"], b, titles[cost_coll], k10["seed"], pair_prefix="cost")
        by_bound[b] += request_rows(sample, knobs, counter, "10", k=1, modes=k10["cost_modes"])
        for c in cols:
            # OOD (2 kinds, on the joint collection) and perturbed (2 families) narratives are
            # max-capacity-length title lists; judged by notebook 09's agents of the collection
            n_narr = math.ceil(k10["n_ood"] * 2 / len(cols)) + k10["n_perturbed"] * 2
            ood = modelled_paths(c, n_narr, b, titles[c], k10["seed"] + 1, methods=("maxcap",), pair_prefix="ood")
            by_bound[b] += request_rows(ood, knobs, counter, "10", k=k10["k"], modes=k10["ood_modes"])
    return _bounded(by_bound), ("size model: cost sample + OOD/perturbed narratives from the profile's knobs, "
                                f"lengths of {PAPER_TABLE1_SOURCE}")
