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

import importlib
import math
import re
from pathlib import PurePosixPath

from judgelab import profiles
from judgelab.study_models import PAPER_JUDGES

DEPENDENCIES = ("judge_model", "embedding_model", "collection_subset", "min_units", "profile",
                "jsd_base", "temporal", "parameter_set", "git_state",
                "k_agents", "pairs_judged", "story_count", "reasoning_effort", "convergence_threshold")
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


def _paper_knobs() -> dict:
    """The paper profile's narrative knobs as the settings file states them: a reference (the
    papers' design) read by name, never the run's configuration (no environment, no parameters)."""
    return profiles.resolved("narrative", PAPER_PROFILE)[0]


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
    knobs = _paper_knobs()
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


#: the paper's stated value of each recorded design choice a claim may depend on (the run records
#: ``<name>`` or, per collection or category, ``<name>.<key>`` through judgelab.run.Run.choose;
#: notebooks 05-06 SAGE's, 09-10 the narrative judges'): a cited constant (``module:NAME``, keyed
#: by collection or category), read when a claim is compared, so that this package imports no study
PAPER_DESIGN = {
    "k_agents": "judgelab.narrative.settings:K_BY_COLLECTION",            # NT section 3.4.3: 5 news, 3 VisPub
    "story_count": "judgelab.sage.analysis.paper_values:CORPUS_DESIGN",   # SAGE Table 5: 50 / 30 / 20 stories
    "convergence_threshold": "judgelab.sage.analysis.paper_values:CONVERGENCE_THRESHOLD",  # |R5 - R4| < 0.3
}
#: SAGE's story categories (its CORPUS_DESIGN also holds the LLM stories' quality tiers)
SAGE_CATEGORIES = ("canonical", "pulp", "llm")
RECORDED = ("k_agents", "pairs_judged", "story_count", "reasoning_effort", "convergence_threshold")


def _cited(ref: str):
    module, _, name = ref.partition(":")
    value = getattr(importlib.import_module(module), name)
    return getattr(value, "value", value)


def paper_design(name: str, claim) -> dict[str, str]:
    """The paper's value of a recorded design choice for ``claim``, as ``{key: value}`` (the
    sidecar's spelling: ``name`` or ``name.<collection | category>``)."""
    collections = [c for c in claim.claim_collections if c != JOINT]
    if name == "k_agents":
        table = _cited(PAPER_DESIGN[name])
        return {f"k_agents.{c}": str(int(table[c])) for c in collections if c in table}
    if name == "pairs_judged":   # the paper judged every endpoint pair it extracted
        knobs = _paper_knobs()["collections"]
        return {f"pairs_judged.{c}": str(int(knobs[c]["n_pairs"])) for c in collections if c in knobs}
    if name == "story_count":
        table = _cited(PAPER_DESIGN[name])
        return {f"story_count.{c}": str(int(getattr(table[c], "value", table[c]))) for c in SAGE_CATEGORIES}
    if name == "convergence_threshold":
        return {name: f"{float(_cited(PAPER_DESIGN[name])):g}"}
    if name == "reasoning_effort":
        paper = PAPER_JUDGES.get(claim.study)
        return {name: str((paper.reasoning_effort if paper else None) or "none")}
    raise KeyError(name)


def _same(got: str, want: str) -> bool:
    try:
        return math.isclose(float(got), float(want), rel_tol=1e-9)
    except ValueError:
        return got == want


def _recorded_differences(claim, deps, sidecar: dict) -> list[str]:
    """Each recorded design choice (:data:`RECORDED`) of the run that is not the paper's stated one."""
    wanted = [d for d in RECORDED if d in deps]
    if not wanted:
        return []
    run = recorded_choices(sidecar) or {}
    out = []
    for name in wanted:
        for key, want in paper_design(name, claim).items():
            got = run.get(key)
            if got is None:
                out.append(f"the run's {key} is not recorded (re-run notebook {claim.notebook})")
            elif not _same(got, want):
                out.append(f"{key} = {got}, not the paper's {want}")
    return out


def effort_of(backend: str | None, model: str | None, policy) -> str:
    """The reasoning effort a run's judge works at (what the gateway sends when a request states
    none: the policy's override, its default, else the model's lowest); "none" for a model that
    takes no reasoning effort. Notebooks record it (``reasoning_effort``)."""
    from judgelab.gateway.reasoning import lowest_effort, reasoning_applies

    if not backend or not model or not reasoning_applies(backend, model):
        return "none"
    return (getattr(policy, "override", None) or getattr(policy, "default", None) or lowest_effort(model))


def judge_choices(scores, backend: str | None, model: str | None, policy) -> dict[str, str]:
    """The narrative judges' design a run records (notebooks 09-10, :meth:`judgelab.run.Run.choose`):
    ``k_agents.<collection>`` and ``pairs_judged.<collection>`` as the tidy ``scores`` (collection,
    pair_id, agent) hold them, and the judge's ``reasoning_effort`` (:func:`effort_of`)."""
    out = {}
    for c, g in scores.groupby("collection", sort=True):
        out[f"k_agents.{c}"] = str(int(g["agent"].nunique()))
        out[f"pairs_judged.{c}"] = str(int(g["pair_id"].nunique()))
    out["reasoning_effort"] = effort_of(backend, model, policy)
    return out


def sage_choices(rows, backend: str | None, model: str | None, policy,
                 convergence_threshold=None) -> dict[str, str]:
    """SAGE's design a run records (notebooks 05-06): ``story_count.<category>`` (stories with a
    row, 0 for an absent category), the judge's ``reasoning_effort`` and, where the notebook uses
    one, the ``convergence_threshold``."""
    n = rows.groupby("category")["story_id"].nunique() if len(rows) else {}
    out = {f"story_count.{c}": str(int(n.get(c, 0))) for c in SAGE_CATEGORIES}
    out["reasoning_effort"] = effort_of(backend, model, policy)
    if convergence_threshold is not None:
        out["convergence_threshold"] = f"{float(convergence_threshold):g}"
    return out


def claim_code(claim) -> tuple[str, ...]:
    """The repository paths whose change can move the numbers of ``claim``'s table: the study
    package of the function that computes it (its whole study: a path's numbers rest on the
    landscape's code too), the statistics floor, the embeddings and the notebook that writes it.
    Not the claims package: the verdict is recomputed from the register at scoring time."""
    module = claim.function.partition(":")[0]
    study = PurePosixPath("lib", *module.split(".")[:2])
    return (f"{study}/", "lib/judgelab/stats/", "lib/judgelab/embeddings.py", f"notebooks/{claim.notebook}_")


def dirty_code(claim, sidecar: dict | None) -> tuple[list[str], list[str]]:
    """(changed files that touch ``claim``'s code (:func:`claim_code`), the other changed files) of a
    run written from a tree with uncommitted changes; both empty for a clean tree."""
    if not sidecar or not sidecar.get("git_dirty"):
        return [], []
    changed = [str(f) for f in sidecar.get("git_changed") or []]
    prefixes = claim_code(claim)
    touching = [f for f in changed if f.startswith(prefixes)]
    return touching, [f for f in changed if f not in touching]


def notes(claim, sidecar: dict | None) -> list[str]:
    """What the row should say about the run that does not change its verdict: uncommitted
    changes that do not touch the claim's code (:func:`dirty_code`)."""
    if "git_state" not in claim.depends_on or not sidecar or not sidecar.get("git_dirty"):
        return []
    touching, other = dirty_code(claim, sidecar)
    if touching:
        return []
    if not other:
        return ["run from uncommitted changes (which files: not recorded)"]
    return [f"run from uncommitted changes: {', '.join(other[:5])}{' ...' if len(other) > 5 else ''} "
            "(none in the code this claim depends on)"]


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
    out += _recorded_differences(claim, deps, sidecar)
    touching, _ = dirty_code(claim, sidecar)
    if "git_state" in deps and touching:
        out.append(f"written from uncommitted changes to the code this claim depends on "
                   f"({', '.join(touching[:5])}{' ...' if len(touching) > 5 else ''}): no commit holds it")
    if "min_units" in deps:
        if units is None or not math.isfinite(units):
            out.append(f"the run's count of units ({claim.units_column}) is unknown")
        elif units < claim.min_units:
            out.append(f"{units:g} units ({claim.units_column}) below the claim's minimum of {claim.min_units:g}")
    return out
