"""Is this run's design the paper's, in what a claim depends on? The scorecard's "not comparable".

A claim's family declares what its numbers depend on (``depends_on`` in ``claims.yaml``: judge
model, embedding model, collection subset, min units, profile, the analysis choices a run records
(JSD base, temporal rule, parameter set) and the git state; docs/claims.md tabulates the paper's
value of each); this module reads the same facts for the run from the table's provenance
sidecar (its ``choices`` and ``git_dirty``) and the profile's knobs (read through :mod:`judgelab.profiles`, so that this package
imports no study), and names every difference. One difference is enough: a verdict on a different
design would read as a verdict on the paper.
"""
from __future__ import annotations

import math
import re

from judgelab import profiles
from judgelab.study_models import PAPER_JUDGES

DEPENDENCIES = ("judge_model", "embedding_model", "collection_subset", "min_units", "profile",
                "jsd_base", "temporal", "parameter_set", "git_state")
#: the analysis choices a run records in its sidecars (``choices``: notebooks 07 and 08,
#: judgelab.run.Run.choose) and that a claim may depend on; the paper's value of each is the
#: paper profile's (its knobs are the paper's stated design)
CHOICES = ("jsd_base", "temporal", "parameter_set")
PAPER_PROFILE = "paper"
PAPER_EMBEDDING = "text-embedding-3-small"
#: the model behind each ``embedding`` knob (judgelab.embeddings.backend): ``precomputed`` is the
#: authors' text-embedding-3-small vectors shipped with the news collection
EMBEDDING_OF_KNOB = {"precomputed": "text-embedding-3-small", "openai": "text-embedding-3-small",
                     "minilm": "all-MiniLM-L6-v2"}
#: the OOD study embeds news and VisPub together with the bundled MiniLM in every profile
#: (judgelab.narrative.analyses.joint_collection; a test reads it there)
JOINT = "joint"
JOINT_EMBEDDING = "all-MiniLM-L6-v2"


def collection_knobs(profile: str | None) -> dict | None:
    """``{collection: knobs}`` of a narrative profile, or None for an unknown profile."""
    if not profile or profile not in profiles.names():
        return None
    return dict(profiles.resolved("narrative", profile)[0]["collections"])


def same_model(run_model: str | None, paper_model: str) -> bool:
    """The paper's model or a dated snapshot of it (``gpt-4.1-mini`` is another model)."""
    return bool(run_model) and re.fullmatch(re.escape(paper_model) + r"(-\d{4}-\d{2}-\d{2})?", str(run_model)) is not None


def recorded_choices(sidecar: dict) -> dict[str, str] | None:
    """The sidecar's ``choices`` as ``{name: value}``; None when it records none."""
    items = sidecar.get("choices")
    if not items:
        return None
    return dict(str(i).split("=", 1) for i in items if "=" in str(i))


def _base(value) -> float:
    return math.e if str(value).strip().lower() == "e" else float(value)


def paper_choices(collections) -> dict[str, str]:
    """The paper's value of each recorded choice (:data:`CHOICES`), from the paper profile."""
    knobs = profiles.knobs("narrative", PAPER_PROFILE)
    out = {"jsd_base": str(knobs["jsd_base"]), "temporal": "True"}
    for c in collections:
        k = knobs["collections"].get(c)
        if k is not None:
            out[f"parameter_set.{c}"] = f"{k.get('n_neighbors')}/{k.get('min_cluster_size')}"
    return out


def _choice_differences(claim, deps, sidecar: dict) -> list[str]:
    wanted = [d for d in CHOICES if d in deps]
    if not wanted:
        return []
    run = recorded_choices(sidecar)
    if run is None:
        return [f"the run's {', '.join(wanted)} not recorded (a sidecar without choices: re-run notebooks 07-08)"]
    collections = [c for c in claim.claim_collections if c != JOINT]
    paper = paper_choices(collections)
    out = []
    if "jsd_base" in wanted:
        got = run.get("jsd_base")
        if got is None:
            out.append("the run's JSD base is not recorded")
        elif "," in got or not math.isclose(_base(got), _base(paper["jsd_base"]), rel_tol=1e-5):
            out.append(f"JSD base {got}, not the paper's {paper['jsd_base']}")
    if "temporal" in wanted and run.get("temporal", "True") != paper["temporal"]:
        out.append(f"temporal rule {run.get('temporal')}, not the paper's (u -> v only if date_u <= date_v)")
    if "parameter_set" in wanted:
        for c in collections:
            got, want = run.get(f"parameter_set.{c}"), paper.get(f"parameter_set.{c}")
            if want is not None and got is not None and got != want:
                out.append(f"{c}: parameter set {got}, not the paper's {want}")
    return out


def differences(claim, sidecar: dict | None, units: float | None = None) -> list[str]:
    """Every way this run's design differs from the paper's in what ``claim`` depends on; empty
    when it is comparable. ``sidecar``: the claim's table's provenance (None: unknown design);
    ``units``: the row's count of design units (for ``min_units``)."""
    deps = claim.depends_on
    if not deps:
        return []
    if sidecar is None:
        return ["the run's design is unknown (no provenance sidecar)"]
    out = []
    profile = sidecar.get("profile")
    if "profile" in deps and profile != PAPER_PROFILE:
        out.append(f"profile {profile or 'unknown'}, not {PAPER_PROFILE} (the paper's design)")
    if "judge_model" in deps and claim.llm:
        paper = PAPER_JUDGES.get(claim.study)
        run = sidecar.get("model")
        if paper is not None and not same_model(run, paper.model):
            out.append(f"judge {run or 'unknown'}, not the paper's {paper.model}")
    if {"embedding_model", "collection_subset"} & set(deps):
        knobs = collection_knobs(profile)
        for c in claim.claim_collections:
            if c == JOINT:
                if "embedding_model" in deps and JOINT_EMBEDDING != PAPER_EMBEDDING:
                    out.append(f"the joint news + VisPub landscape is embedded with {JOINT_EMBEDDING}, "
                               f"not the paper's {PAPER_EMBEDDING}")
                continue
            if knobs is None:
                out.append(f"profile {profile or 'unknown'}: its collections are unknown")
                break
            if c not in knobs:
                out.append(f"the {profile} profile has no {c} collection")
                continue
            emb = EMBEDDING_OF_KNOB.get(knobs[c].get("embedding"), str(knobs[c].get("embedding")))
            if "embedding_model" in deps and emb != PAPER_EMBEDDING:
                out.append(f"{c} embedded with {emb}, not the paper's {PAPER_EMBEDDING}")
            subset = knobs[c].get("subset")
            if "collection_subset" in deps and subset is not None:
                out.append(f"{c}: a subset of about {subset} documents, not the whole collection")
    out += _choice_differences(claim, deps, sidecar)
    if "git_state" in deps and sidecar.get("git_dirty"):
        out.append("written from a tree with uncommitted changes (git_dirty): no commit holds the code behind it")
    if "min_units" in deps:
        if units is None or not math.isfinite(units):
            out.append(f"the run's count of units ({claim.units_column}) is unknown")
        elif units < claim.min_units:
            out.append(f"{units:g} units ({claim.units_column}) below the claim's minimum of {claim.min_units:g}")
    return out
