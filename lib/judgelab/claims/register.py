"""The claims register, ``claims.yaml`` beside this module: every headline claim of both papers,
with the paper's wording, where it is, the statistic that tests it, the table and column this
compendium computes it in, and the verdict rule fixed before any run.

The paper's numbers are never typed into the register: ``paper`` names the cited constant in a
study's ``paper_values`` module (``ref: "judgelab.sage.analysis.paper_values:TABLE8"`` with
``keys: [convergence_rate]``; a list inside ``keys`` is a tuple key), or a ratio of two such
constants (``ratio: [{ref, keys}, {ref, keys}]``), or their difference (``diff``), plus an
optional ``add`` (``ratio`` with ``add: -1`` is "127% more tokens"). A bound that is part of the claim's wording
("ICC > 0.92") is the rule's ``bound``, quoted in ``wording``.

Bad entries raise :class:`RegisterError` naming the claim and the field.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from judgelab.claims.intervals import KINDS
from judgelab.claims.verdicts import RULE_TYPES

REGISTER = Path(__file__).with_name("claims.yaml")
STUDIES = ("sage", "narrative")
CI_SOURCES = ("table", "fallback", "none")
REQUIRED = ("id", "study", "label", "wording", "location", "statistic", "kind", "unit", "table", "column",
            "rule", "llm", "notebook", "function")


class RegisterError(ValueError):
    """A claim in the register is malformed: the message names it and the field."""


@dataclass(frozen=True)
class Claim:
    id: str
    study: str
    label: str
    wording: str
    location: str
    statistic: str
    kind: str
    unit: str
    table: str
    column: str
    rule: dict
    llm: bool
    notebook: str
    function: str
    paper: dict | None = None
    where: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    p_column: str | None = None
    power: dict | None = None
    ci_columns: str = "fallback"   # "table": the table has the CI columns; "fallback": the scorecard computes
                                   # it from ``inputs``; "none": neither can (a point estimate only)
    ci_low: str | None = None      # the CI columns' names when they differ from <column>_ci_low / _ci_high
    ci_high: str | None = None
    offset: float = 0.0            # the kind's statistic is estimate + offset (a ratio - 1 read as a ratio)
    reciprocal: bool = False       # the claim's statistic is 1 / (column + offset), e.g. r_simple / r_complex
                                   # read from r_gain_rel = r_complex / r_simple - 1 (interval ends swap)
    column_pending: bool = False   # the column itself is not written yet (expected with issue 26)
    note: str = ""

    @property
    def ci_low_column(self) -> str:
        return self.ci_low or f"{self.column}_ci_low"

    @property
    def ci_high_column(self) -> str:
        return self.ci_high or f"{self.column}_ci_high"

    def paper_value(self) -> float | None:
        return resolve_paper(self.paper, self.id)


def _lookup(ref: str, keys: list, claim_id: str) -> float:
    module, _, name = ref.partition(":")
    try:
        node = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise RegisterError(f"claim {claim_id}: paper.ref {ref!r} not found ({exc})") from None
    for k in keys:
        k = tuple(k) if isinstance(k, list) else k
        try:
            node = node[k]
        except (KeyError, TypeError, IndexError):
            raise RegisterError(f"claim {claim_id}: paper.ref {ref!r} has no key {k!r}") from None
    value = getattr(node, "value", node)  # a SAGE PaperValue, or a bare number
    if not isinstance(value, (int, float)):
        raise RegisterError(f"claim {claim_id}: paper.ref {ref!r}{keys} is not a number ({value!r})")
    return float(value)


def resolve_paper(paper: dict | None, claim_id: str = "?") -> float | None:
    """The paper's number a claim cites (module docstring), or None when it cites none."""
    if not paper:
        return None
    add = float(paper.get("add", 0.0))
    for op in ("ratio", "diff"):
        if op in paper:
            if not isinstance(paper[op], list) or len(paper[op]) != 2:
                raise RegisterError(f"claim {claim_id}: paper.{op} needs two references")
            a, b = (_lookup(p["ref"], p.get("keys", []), claim_id) for p in paper[op])
            return (a / b if op == "ratio" else a - b) + add
    if "ref" not in paper:
        raise RegisterError(f"claim {claim_id}: paper needs ref (with keys), ratio or diff")
    return _lookup(paper["ref"], paper.get("keys", []), claim_id) + add


def _check(entry: dict, i: int) -> Claim:
    cid = entry.get("id", f"#{i}")
    missing = [f for f in REQUIRED if f not in entry]
    if missing:
        raise RegisterError(f"claim {cid}: missing field(s) {', '.join(missing)}")
    unknown = set(entry) - set(Claim.__dataclass_fields__)
    if unknown:
        raise RegisterError(f"claim {cid}: unknown field(s) {', '.join(sorted(unknown))}")
    if entry["study"] not in STUDIES:
        raise RegisterError(f"claim {cid}: study {entry['study']!r} not one of {STUDIES}")
    if entry["kind"] not in KINDS:
        raise RegisterError(f"claim {cid}: kind {entry['kind']!r} not one of {', '.join(KINDS)}")
    if entry["rule"].get("type") not in RULE_TYPES:
        raise RegisterError(f"claim {cid}: rule.type {entry['rule'].get('type')!r} not one of {', '.join(RULE_TYPES)}")
    if not isinstance(entry["llm"], bool):
        raise RegisterError(f"claim {cid}: llm must be true or false")
    if entry.get("ci_columns", "fallback") not in CI_SOURCES:
        raise RegisterError(f"claim {cid}: ci_columns must be one of {', '.join(CI_SOURCES)}")
    if entry.get("reciprocal") and entry.get("inputs"):
        raise RegisterError(f"claim {cid}: reciprocal reads the table's own interval; it takes no fallback inputs")
    # a bound or margin may cite a constant too ({ref, keys}): resolved here, once
    rule = {k: (_lookup(v["ref"], v.get("keys", []), cid) if isinstance(v, dict) and "ref" in v else v)
            for k, v in entry["rule"].items()}
    entry = {**entry, "rule": rule, "notebook": f"{int(entry['notebook']):02d}"}
    claim = Claim(**entry)
    if claim.rule["type"] == "inside_ci" and claim.paper is None:
        raise RegisterError(f"claim {cid}: rule inside_ci needs a paper value")
    claim.paper_value()  # resolves, or names the claim and the reference
    return claim


def load(path: Path | None = None) -> list[Claim]:
    """Every claim of the register, checked (:class:`RegisterError` on the first bad one)."""
    path = Path(path or REGISTER)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise RegisterError(f"{path}: expected a mapping with a list under 'claims'")
    claims = [_check(e, i) for i, e in enumerate(data["claims"])]
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise RegisterError(f"{path}: claim id {c.id!r} appears twice")
        seen.add(c.id)
    return claims


def as_frame(claims: list[Claim]):
    """The register as a table (one row per claim), for notebooks and the site."""
    import pandas as pd

    return pd.DataFrame([{"claim_id": c.id, "study": c.study, "label": c.label, "wording": c.wording,
                          "location": c.location, "statistic": c.statistic, "paper_value": c.paper_value(),
                          "rule": _rule_text(c.rule), "table": c.table, "column": c.column, "llm": c.llm}
                         for c in claims])


def _rule_text(rule: dict) -> str:
    extras = ", ".join(f"{k}={v}" for k, v in rule.items() if k != "type")
    return rule["type"] + (f" ({extras})" if extras else "")
