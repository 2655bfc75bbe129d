"""The claims register, ``claims.yaml`` beside this module: every headline claim of both papers,
with the paper's wording, where it is, the statistic that tests it, the table and column this
compendium computes it in, and the verdict rule fixed before any run.

The paper's numbers are never typed into the register: ``paper`` names a cited constant of a
study's ``paper_values`` module (``{ref, keys}``; a list inside ``keys`` is a tuple key), or the
``ratio`` or ``diff`` of two, plus an optional ``add`` (``ratio`` with ``add: -1`` is "127% more
tokens"). A bound that is part of the claim's wording ("ICC > 0.92") is the rule's ``bound``.

Bad entries raise :class:`RegisterError` naming the claim and the field.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from judgelab import settings_file
from judgelab.claims.design import DEPENDENCIES
from judgelab.claims.intervals import KINDS
from judgelab.claims.verdicts import RULE_TYPES

REGISTER = Path(__file__).with_name("claims.yaml")
STUDIES = ("sage", "narrative")
CI_SOURCES = ("table", "fallback", "analytic", "none")
REQUIRED = ("id", "study", "label", "wording", "location", "statistic", "kind", "unit", "table", "column",
            "rule", "llm", "notebook", "function", "family")
FAMILY_FIELDS = {"margin", "reason", "depends_on", "min_units", "min_units_reason"}


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
                                   # it from ``inputs``; "analytic": the table has a bootstrap interval but
                                   # the verdict reads the kind's analytic one from ``inputs`` (the bootstrap
                                   # undercovers at the claim's n; the claim's note says by how much);
                                   # "none": neither can (a point estimate only)
    ci_low: str | None = None      # the CI columns' names when they differ from <column>_ci_low / _ci_high
    ci_high: str | None = None
    offset: float = 0.0            # the kind's statistic is estimate + offset (a ratio - 1 read as a ratio)
    reciprocal: bool = False       # the claim's statistic is 1 / (column + offset), e.g. r_simple / r_complex
                                   # read from r_gain_rel = r_complex / r_simple - 1 (interval ends swap)
    column_pending: bool = False   # the column itself is not written yet
    note: str = ""
    family: str = ""
    units_column: str | None = None        # the row's count of design units (depends_on: min_units)
    n_units: Any = None                    # the count of the claim's unit (the scorecard's ``n``) where the
                                           # inputs count something else: paths (two per endpoint pair),
                                           # story x mode rows (two per story); a column or {column, where}
    collections: tuple = ()                # where the numbers come from when ``where`` names none
    margin_reason: str = ""
    depends_on: tuple = ()
    min_units: float | None = None
    min_units_reason: str = ""
    fixed: str = ""                        # the date the margins and designs were fixed
    other_reading: dict = field(default_factory=dict)  # ``where`` overrides of the estimand shown beside
                                                       # (e.g. the story means beside the paper's story x mode rows)

    @property
    def margin(self) -> float:
        return float(self.rule["margin"])

    @property
    def claim_collections(self) -> tuple:
        """The collections the claim's numbers come from (``collections``, else ``where``'s)."""
        if self.collections:
            return tuple(self.collections)
        c = self.where.get("collection")
        return (c,) if c else ()

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
    try:  # a value of the settings file (e.g. the paper profile's pairs), else a module's constant
        node = settings_file.load() if ref == "profiles.toml" else getattr(importlib.import_module(module), name)
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


def _family(name: str, families: dict, cid: str) -> dict:
    fam = families.get(name)
    if not isinstance(fam, dict):
        raise RegisterError(f"claim {cid}: family {name!r} not in the register's families")
    unknown = set(fam) - FAMILY_FIELDS
    if unknown or "margin" not in fam or not str(fam.get("reason", "")).strip():
        raise RegisterError(f"family {name}: needs margin and reason (unknown: {', '.join(sorted(unknown)) or 'none'})")
    deps = tuple(fam.get("depends_on", ()))
    bad = [d for d in deps if d not in DEPENDENCIES]
    if bad:
        raise RegisterError(f"family {name}: depends_on {bad} not among {', '.join(DEPENDENCIES)}")
    if ("min_units" in deps) != ("min_units" in fam):
        raise RegisterError(f"family {name}: depends_on min_units and a min_units value go together")
    return fam


def _resolve_margin(margin, scale_value: float | None, cid: str) -> float:
    """A family's margin as a number on the statistic's scale (``{relative: f}``: f |value|)."""
    if isinstance(margin, dict) and set(margin) == {"relative"}:
        if scale_value is None or not isinstance(scale_value, (int, float)):
            raise RegisterError(f"claim {cid}: a relative margin needs the paper's value or a bound")
        return float(margin["relative"]) * abs(float(scale_value))
    if isinstance(margin, (int, float)) and not isinstance(margin, bool) and margin >= 0:
        return float(margin)
    raise RegisterError(f"claim {cid}: margin {margin!r}: a number >= 0 or {{relative: f}}")


def _check(entry: dict, i: int, families: dict | None = None, fixed: str = "") -> Claim:
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
    if "margin" in rule or "max_ci_width" in rule:
        raise RegisterError(f"claim {cid}: the margin comes from the claim's family, not its rule")
    fam = _family(entry["family"], families or {}, cid)
    scale = rule.get("bound", resolve_paper(entry.get("paper"), cid))
    rule["margin"] = _resolve_margin(fam["margin"], scale, cid)
    entry = {**entry, "rule": rule, "notebook": f"{int(entry['notebook']):02d}",
             "collections": tuple(entry.get("collections", ())), "margin_reason": str(fam["reason"]).strip(),
             "depends_on": tuple(fam.get("depends_on", ())), "min_units": fam.get("min_units"),
             "min_units_reason": str(fam.get("min_units_reason", "")).strip(), "fixed": fixed}
    claim = Claim(**entry)
    if claim.rule["type"] == "value" and claim.paper is None:
        raise RegisterError(f"claim {cid}: rule value needs a paper value")
    if "min_units" in claim.depends_on and not claim.units_column:
        raise RegisterError(f"claim {cid}: its family depends on min_units; name the row's units_column")
    claim.paper_value()  # resolves, or names the claim and the reference
    return claim


def _changelog(data: dict, path: Path) -> list[dict]:
    """The register's dated changes after ``fixed`` (each ``{date, change, reason}``), checked."""
    log = data.get("changelog", [])
    if not isinstance(log, list):
        raise RegisterError(f"{path}: changelog must be a list of {{date, change, reason}}")
    for i, e in enumerate(log):
        if not isinstance(e, dict) or set(e) != {"date", "change", "reason"} or not all(str(e[k]).strip() for k in e):
            raise RegisterError(f"{path}: changelog entry {i + 1} needs exactly date, change and reason")
        if str(e["date"]) < str(data["fixed"]):
            raise RegisterError(f"{path}: changelog entry {i + 1} ({e['date']}) predates fixed ({data['fixed']})")
    return log


@dataclass(frozen=True)
class Identity:
    """Which register a scorecard read: its path, sha256, whether it is the committed one, the
    commit that last changed it (None: uncommitted or outside the repository), the date its
    margins were fixed and its last dated change."""
    path: str
    sha256: str
    committed_register: bool
    commit: str | None
    fixed: str
    last_change: str

    @property
    def label(self) -> str:
        """One line for every scorecard row and the page: the committed register, or another one."""
        if self.committed_register and self.commit:
            return f"committed register {self.sha256[:12]} (commit {self.commit[:10]}, fixed {self.fixed}{self.last_change})"
        if self.committed_register:
            return f"committed register with uncommitted changes {self.sha256[:12]} (fixed {self.fixed}{self.last_change})"
        return f"OTHER REGISTER {self.path} {self.sha256[:12]}: not the compendium's committed register"


def identity(path: Path | None = None) -> Identity:
    """The :class:`Identity` of the register at ``path`` (None: the committed ``claims.yaml``). A
    register is the committed one when it is ``claims.yaml`` beside this module and the file is
    as git last committed it."""
    import hashlib
    import subprocess

    path = Path(path or REGISTER).resolve()
    raw = path.read_bytes()
    data = yaml.safe_load(raw.decode("utf-8")) or {}
    log = _changelog(data, path) if isinstance(data, dict) and "fixed" in data else []
    commit = None
    ours = path == REGISTER.resolve()
    if ours:
        try:
            git = dict(cwd=path.parent, capture_output=True, text=True, timeout=10)
            clean = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", path.name], **git).returncode == 0
            out = subprocess.run(["git", "log", "-1", "--format=%H", "--", path.name], **git).stdout.strip()
            commit = out if clean and out else None
        except (OSError, subprocess.SubprocessError):
            commit = None
    last = f"; changed {log[-1]['date']}" if log else ""
    return Identity(str(path), hashlib.sha256(raw).hexdigest(), ours, commit, str(data.get("fixed", "")), last)


def load(path: Path | None = None) -> list[Claim]:
    """Every claim of the register, checked (:class:`RegisterError` on the first bad one)."""
    path = Path(path or REGISTER)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise RegisterError(f"{path}: expected a mapping with a list under 'claims'")
    if not isinstance(data.get("families"), dict) or not str(data.get("fixed", "")).strip():
        raise RegisterError(f"{path}: expected 'families' (margins and designs) and the date they were 'fixed'")
    _changelog(data, path)
    fixed = str(data["fixed"])
    claims = [_check(e, i, data["families"], fixed) for i, e in enumerate(data["claims"])]
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
                          "rule": _rule_text(c.rule), "margin": c.margin, "margin_reason": c.margin_reason,
                          "depends_on": ", ".join(c.depends_on), "table": c.table, "column": c.column,
                          "llm": c.llm}
                         for c in claims])


def _rule_text(rule: dict) -> str:
    extras = ", ".join(f"{k}={v}" for k, v in rule.items() if k != "type")
    return rule["type"] + (f" ({extras})" if extras else "")
