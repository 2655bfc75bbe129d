"""The scorecard: every claim of the register (:mod:`judgelab.claims.register`) read against one
run's tables, with its interval, its margin, its verdict (:mod:`judgelab.claims.verdicts`) and the
number of units a run needs to test it (:mod:`judgelab.claims.power`).

The questions, in order: is the table there (else ``not run``)? is the claim about an LLM's
judgements and the judge (the table's provenance sidecar) the embedded model, or unknown (``not
testable by this judge``)? is the row there (``not run``, with the design differences that explain
its absence)? does the run's design differ from the paper's in what the claim depends on (``not
comparable``, :mod:`judgelab.claims.design`)? Only then does the claim's rule see the interval:
``reproduced``, ``not reproduced`` or ``inconclusive``.

The estimate: the claim's ``table``, the row(s) chosen by ``where`` (column -> value, compared as
text; ``*`` is a wildcard), the ``column`` (1 / (column + offset) with ``reciprocal: true``). The
interval: the table's own ``<column>_ci_low`` / ``_ci_high`` when it has them (left empty where
the table leaves them empty), otherwise :func:`fallback_interval`, the one place where the
scorecard computes an interval itself (``ci_source`` says which).
"""
from __future__ import annotations

import math
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab import provenance
from judgelab.claims import design, intervals, power
from judgelab.claims.register import Claim, RegisterError, _lookup
from judgelab.stats.intervals import proportion_ci_design_effect
from judgelab.claims.verdicts import CODES as VERDICT_CODES
from judgelab.claims.verdicts import (DECIDED, INCONCLUSIVE, NOT_COMPARABLE, NOT_RUN, NOT_TESTABLE, VERDICTS,
                                      decide, expected_by_chance)

NO_INTERVAL = "none (no interval in the table)"
COLUMNS = ["claim_id", "study", "label", "verdict", "reason", "paper_value", "estimate", "ci_low", "ci_high",
           "ci_width", "margin", "decisive_width", "ci_method", "ci_source", "other_reading", "other_estimate",
           "other_ci_low", "other_ci_high", "unit", "n", "judge", "embedded_judge",
           "llm_claim", "rule", "depends_on", "design_differences", "run_note", "n_80_paper", "n_paper", "power_unit",
           "power_note", "paper_check", "paper_check_verdict", "margin_reason", "table", "column", "notebook", "function", "location", "wording"]


def _as_text(col: pd.Series) -> pd.Series:
    """A filter column as text, an empty cell as "" (so a where never trips on a missing value)."""
    return col.map(lambda v: "" if pd.isna(v) else str(v))


def select_row(df: pd.DataFrame, claim: Claim, source: str) -> pd.Series | None:
    """The one row ``claim.where`` picks, None when none; RegisterError naming the claim."""
    mask = pd.Series(True, index=df.index)
    for col, value in claim.where.items():
        if col not in df.columns:
            raise RegisterError(f"claim {claim.id}: {source} has no column {col!r} (where)")
        mask &= _as_text(df[col]).map(lambda cell, pat=str(value): fnmatchcase(cell, pat))
    if claim.column not in df.columns:
        raise RegisterError(f"claim {claim.id}: {source} has no column {claim.column!r}")
    hits = df[mask]
    if len(hits) > 1:
        raise RegisterError(f"claim {claim.id}: where {claim.where} picks {len(hits)} rows of {source}, not one")
    return hits.iloc[0] if len(hits) else None


def _num(row: pd.Series, spec, claim: Claim, what: str, tables_dir: Path | None = None) -> float:
    """A number for ``what``: a column of ``row`` (a string), a column of another row
    ({column, where[, table]}: of this claim's table unless ``table`` names another), a cited
    constant ({ref, keys}) or a design constant (a number, e.g. K agents)."""
    if isinstance(spec, dict) and "column" in spec:
        if tables_dir is None:
            return math.nan
        name = spec.get("table", claim.table)
        csv = Path(tables_dir) / f"{name}.csv"
        if not csv.exists():
            return math.nan
        other = Claim(**{**claim.__dict__, "table": name, "where": spec.get("where", {}), "column": spec["column"]})
        hit = select_row(pd.read_csv(csv), other, csv.name)
        return _num(hit, spec["column"], other, what) if hit is not None else math.nan
    if isinstance(spec, str):
        if spec not in row.index:
            raise RegisterError(f"claim {claim.id}: {what} names column {spec!r}, not in table {claim.table}")
        v = pd.to_numeric(row[spec], errors="coerce")
        return float(v) if pd.notna(v) else math.nan
    if isinstance(spec, dict) and "ref" in spec:
        return _lookup(spec["ref"], spec.get("keys", []), claim.id)
    if isinstance(spec, (int, float)):
        return float(spec)
    raise RegisterError(f"claim {claim.id}: {what}: expected a column name, a cited constant or a number")


def tidy_values(claim: Claim, interim_dir: Path) -> np.ndarray | None:
    """The unit values behind a claim whose ``inputs.tidy`` names an interim file (``narr_paths``)
    with ``where`` filters and a ``value`` column; None when the file is absent."""
    from judgelab import interim

    spec = claim.inputs["tidy"]
    try:
        df = interim.read(spec["name"], interim_dir)
    except interim.InterimFileMissing:
        return None
    for col, value in spec.get("where", {}).items():
        if col not in df.columns:
            raise RegisterError(f"claim {claim.id}: interim {spec['name']} has no column {col!r}")
        df = df[_as_text(df[col]).map(lambda cell, pat=str(value): fnmatchcase(cell, pat))]
    if spec["value"] not in df.columns:
        raise RegisterError(f"claim {claim.id}: interim {spec['name']} has no column {spec['value']!r}")
    return pd.to_numeric(df[spec["value"]], errors="coerce").dropna().to_numpy(float)


def fallback_interval(claim: Claim, row: pd.Series, estimate: float, tables_dir: Path | None = None,
                      interim_dir: Path | None = None) -> tuple[float, float]:
    """The 95% interval of ``estimate`` from the row's summary columns (``claim.inputs``) or from
    the unit values of an interim file (``inputs.tidy``: a Student-t interval of their mean), by the
    claim's kind (:mod:`judgelab.claims.intervals`); NaNs when the claim names no inputs."""
    if not claim.inputs:
        return math.nan, math.nan
    if "tidy" in claim.inputs:
        if claim.kind != "mean":
            raise RegisterError(f"claim {claim.id}: inputs.tidy is for kind mean only")
        v = tidy_values(claim, Path(interim_dir)) if interim_dir is not None else None
        if v is None or len(v) < intervals.MIN_UNITS["mean"]:
            return math.nan, math.nan
        _, lo, hi = intervals.mean(v.mean(), v.std(ddof=1), len(v))
        return float(lo), float(hi)
    x = {k: _num(row, v, claim, f"inputs.{k}", tables_dir) for k, v in claim.inputs.items()}
    estimate = estimate + claim.offset
    need = {"proportion": ("n",), "mean": ("sd", "n"), "paired_diff": ("sd", "n"), "mean_diff": ("s1", "n1", "s2", "n2"),
            "cohens_d": ("n1", "n2"), "auc": ("n1", "n2"), "correlation": ("n",), "icc": ("n", "k"),
            "ratio": ("m1", "s1", "n1", "m2", "s2", "n2")}[claim.kind]
    missing = [k for k in need if k not in x]
    if missing:
        raise RegisterError(f"claim {claim.id}: kind {claim.kind} needs inputs {', '.join(missing)}")
    k = claim.kind
    counts = [x[c] for c in ("n", "n1", "n2") if c in x and c in need]
    if any(not np.isfinite(c) or c < intervals.MIN_UNITS[k] for c in counts):
        return math.nan, math.nan   # too few units for this method (intervals.MIN_UNITS)
    if k == "proportion":
        out = intervals.proportion(estimate * x["n"], x["n"])
    elif k in ("mean", "paired_diff"):
        out = intervals.mean(estimate, x["sd"], x["n"])
    elif k == "mean_diff":
        out = intervals.mean_diff(estimate, x["s1"], x["n1"], 0.0, x["s2"], x["n2"])
    elif k in ("cohens_d", "auc"):
        out = getattr(intervals, k)(estimate, x["n1"], x["n2"])
    elif k == "correlation":
        out = intervals.correlation(estimate, x["n"])
    elif k == "icc":
        f = (1 + (x["k"] - 1) * estimate) / (1 - estimate) if estimate < 1 else math.inf
        out = intervals.icc_from_f(f, x["n"], x["k"])
    else:
        out = intervals.ratio(x["m1"], x["s1"], x["n1"], x["m2"], x["s2"], x["n2"])
    return float(out[1]) - claim.offset, float(out[2]) - claim.offset


def reciprocal(est: float, lo: float, hi: float, offset: float = 0.0) -> tuple[float, float, float, str]:
    """(1 / (est + offset), the interval's ends mapped and swapped, a note). The map is monotone
    on either side of 0, so percentile ends map to ends; an interval containing 0 has no bounded
    reciprocal: NaN ends, and the note says why."""
    x, a, b = est + offset, lo + offset, hi + offset
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1 / x if x != 0 else math.nan
    if not (np.isfinite(a) and np.isfinite(b)):
        return value, math.nan, math.nan, ""
    if a <= 0 <= b:
        return value, math.nan, math.nan, "its interval contains 0: the reciprocal's is unbounded"
    return value, 1 / b, 1 / a, "reciprocal of (column + offset): interval ends mapped and swapped"


def _n_units(claim: Claim, row: pd.Series, tables_dir: Path) -> float:
    """The count of the claim's unit: ``n_units`` where the register names it (NaN where the table
    lacks that column), else the inputs' counts summed."""
    if claim.n_units is not None:
        if isinstance(claim.n_units, str) and claim.n_units not in row.index:
            return math.nan
        return _num(row, claim.n_units, claim, "n_units", tables_dir)
    keys = ("n1",) if claim.kind == "ratio" else ("n", "n1", "n2")
    ns = [_num(row, claim.inputs[k], claim, f"inputs.{k}", tables_dir) for k in keys if k in claim.inputs]
    return float(sum(ns)) if ns else math.nan


def power_model(claim: Claim, paper_value: float | None) -> tuple[dict | None, list[str]]:
    """(truth, notes): the truth a claim's runs are simulated from at the paper's design (its
    power spec: the statistic at ``paper_value``, the paper's SDs, stated assumptions), or (None,
    why there is none)."""
    spec = claim.power
    if not claim.llm and not spec:
        return None, ["no judge; the register gives no sampling model over its units"]
    if not spec:
        return None, ["no power simulation for this claim (see the register's note)"]
    truth = {k: (paper_value if v == "paper" else _num(pd.Series(dtype=float), v, claim, f"power.truth.{k}"))
             for k, v in spec.get("truth", {}).items()}
    if "share" in spec:  # a group's share of the units, from the paper's design (e.g. 50 of 70 stories)
        a, b = (_lookup(p["ref"], p.get("keys", []), claim.id) for p in spec["share"])
        truth["share_a"] = a / (a + b)
    truth.update({k: _num(pd.Series(dtype=float), v, claim, f"power.paper_sd.{k}") for k, v in spec.get("paper_sd", {}).items()})
    truth.update({k: float(v) for k, v in spec.get("assume", {}).items()})
    notes = [spec["assumption"]] if spec.get("assumption") else []
    needed = {"mean_diff": ("sd_a", "sd_b"), "mean": ("sd",), "paired_diff": ("sd", "rho")}.get(claim.kind, ())
    if any(k not in truth for k in needed):
        return None, notes + ["the paper gives no SD and the register states none"]
    if not all(v is not None and np.isfinite(v) for v in truth.values()):
        return None, notes + ["the paper's value or a spread is missing"]
    return truth, notes


def n_paper(claim: Claim) -> float:
    """The paper's design in the claim's power units (NaN where the register names none)."""
    units = paper_units(claim)
    if not units:
        return math.nan
    return sum(v for _, _, v in units) * (claim.power or {}).get("paper_n", {}).get("times", 1)


def claim_power(claim: Claim, paper_value: float | None, knobs: dict) -> dict:
    """``n_80_paper``: the units at which the rule reproduces with 80% power (paper's spread)."""
    out = {"n_80_paper": math.nan, "n_paper": math.nan, "power_unit": "", "power_note": ""}
    truth, notes = power_model(claim, paper_value)
    if claim.power:
        out["power_unit"] = claim.power.get("unit", claim.unit)
        out["n_paper"] = n_paper(claim)
    if truth is not None:
        out["n_80_paper"] = power.n_required(claim.kind, truth, claim.rule, paper_value, resample=claim.power.get("resample"),
                                             n_sim=knobs["power_simulations"], n_max=knobs["power_n_max"],
                                             seed=knobs["power_seed"])
    if math.isinf(out["n_80_paper"]):
        notes.append(f"not reached by n = {knobs['power_n_max']}")
    if out["n_80_paper"] > out["n_paper"]:   # NaN compares False: only where both are known
        notes.insert(0, UNDECIDABLE_AT_PAPER)
    out["power_note"] = "; ".join(notes)
    return out


UNDECIDABLE_AT_PAPER = "the paper's own design cannot decide this at its margin (n_80_paper > n_paper)"
#: the order the first screen shows verdicts in: what the run decided first
SCREEN_ORDER = (*DECIDED, INCONCLUSIVE, NOT_COMPARABLE, NOT_TESTABLE, NOT_RUN)


def decided_first(card: pd.DataFrame) -> pd.DataFrame:
    """The scorecard with decided claims first (reproduced, within the margin, not reproduced),
    then inconclusive, not comparable, not testable, not run; the register's order within each."""
    rank = card["verdict"].map({v: i for i, v in enumerate(SCREEN_ORDER)}).fillna(len(SCREEN_ORDER))
    return card.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")


def first_screen(card: pd.DataFrame) -> str:
    """Markdown for the top of the scorecard: the judge (the embedded-model warning first), how many
    claims this run decides, and why the others are not decided, each reason counted."""
    backend, model = run_judge(card)
    embedded = bool(card["embedded_judge"].fillna(False).astype(bool).any())
    n = card["verdict"].value_counts()
    lines = []
    if embedded:
        lines.append(f"**Warning: this run's judge is the embedded small model ({backend}:{model}).** It shows that the "
                     "pipeline runs; its judgements are close to random, so no claim about an LLM's judgements is "
                     "tested here (those rows say *not testable by this judge*).")
    else:
        lines.append(f"Judge of this run: **{backend}:{model}**." if model else "Judge: none read (no LLM table).")
    decided = sum(int(n.get(v, 0)) for v in DECIDED)
    lines.append(f"**This run decides {decided} of {len(card)} claims**: "
                 + ", ".join(f"{int(n.get(v, 0))} {v}" for v in DECIDED) + ".")
    why = {INCONCLUSIVE: "the interval is too wide to tell, or there is none",
           NOT_TESTABLE: "a claim about an LLM's judgements, and this run's judge cannot test it",
           NOT_COMPARABLE: "the run's design differs from the paper's in what the claim depends on",
           NOT_RUN: "the table or row is not in this run"}
    rest = [f"{int(n[v])} {v} ({why[v]})" for v in why if n.get(v, 0)]
    if rest:
        lines.append("Not decided: " + "; ".join(rest) + ".")
    nc = card.loc[card["verdict"] == NOT_COMPARABLE, "design_differences"].fillna("").str.split("; ").explode()
    if len(nc) and nc.str.len().gt(0).any():
        top = nc[nc.str.len() > 0].value_counts().head(3)
        lines.append("Most frequent design differences: " + "; ".join(f"{k} ({v})" for k, v in top.items()) + ".")
    if "register" in card.columns and len(card):
        lines.append(f"Register: {card['register'].iloc[0]}.")
    return "\n\n".join(lines)


OPERATING_COLUMNS = ["claim_id", "rule", "kind", "power_unit", "n_paper", "scenario", "truth", "status",
                     *VERDICT_CODES, "error", "note"]


def operating_table(claims: list[Claim], n_sim: int, seed: int = 0) -> pd.DataFrame:
    """Each registered claim's operating characteristics at the paper's design (docs/claims.md):
    its runs simulated (:func:`judgelab.claims.power.operating`: the claim's unit, ``n_paper``,
    the interval its table uses, its own rule) at the paper's value, the edge of the margin and
    beyond it on each side; one row per claim and scenario, and one row saying why for a claim
    with no power model."""
    rows = []
    for c in claims:
        pv = c.paper_value()
        truth, notes = power_model(c, pv)
        base = {"claim_id": c.id, "rule": c.rule["type"], "kind": c.kind,
                "power_unit": (c.power or {}).get("unit", c.unit), "n_paper": n_paper(c) if c.power else math.nan}
        n = base["n_paper"]
        if truth is not None and not np.isfinite(n):
            truth, notes = None, notes + ["the register names no paper design size (power.paper_n or power.share)"]
        if c.ci_columns == "none":  # no interval the verdict may read: never decided, whatever the truth
            rows += [{**base, "scenario": what, "truth": value, "status": status, **dict.fromkeys(VERDICT_CODES, 0.0),
                      VERDICT_CODES[0]: 1.0, "error": 0.0, "note": "no interval the verdict may read (ci_columns: none)"}
                     for what, value, status in power.scenarios(c.rule, pv)]
            continue
        if truth is None:
            rows.append({**base, "note": "; ".join(notes)})
            continue
        for r in power.operating(c.kind, truth, c.rule, pv, int(n), n_sim=n_sim, seed=seed,
                                 resample=c.power.get("resample")):
            rows.append({**base, **r, "note": "; ".join(notes)})
    return pd.DataFrame(rows, columns=OPERATING_COLUMNS)


def worst_errors(table: pd.DataFrame) -> pd.DataFrame:
    """Per claim with a power model: its largest error rate at a truth where the claim is true
    (refuted) and where it is false (reproduced)."""
    t = table.dropna(subset=["error"])
    t = t.assign(kind_of_error=np.where(t["status"] == power.TRUE, "refutes a true paper value",
                                        "reproduces a false one"))
    return (t.groupby(["claim_id", "kind_of_error"])["error"].max().unstack()
            .reindex(columns=["refutes a true paper value", "reproduces a false one"]))


#: the paper-design references a run's size is made of: SAGE's stories per category, the
#: narrative study's endpoint pairs per collection (the sizes ``make estimate`` takes)
SIZE_REFS = {"judgelab.sage.analysis.paper_values:CORPUS_DESIGN": ("sage", 0),
             "profiles.toml": ("narrative", 3)}


def paper_units(claim: Claim) -> list[tuple[str, str, float]]:
    """(study, unit, the paper's count) of each unit the claim's power counts, from its
    ``power.share`` or ``power.paper_n.sum`` references (e.g. ("sage", "canonical", 50)); the
    study is "" for a reference that is no size of a run (Table 8's evaluations)."""
    spec = claim.power or {}
    refs = spec.get("share") or spec.get("paper_n", {}).get("sum", [])
    out = []
    for r in refs:
        study, pos = SIZE_REFS.get(r["ref"], ("", None))
        name = str(r["keys"][pos]) if pos is not None else ".".join(map(str, r.get("keys", [])))
        out.append((study, name, _lookup(r["ref"], r.get("keys", []), claim.id)))
    return out


def run_sizes(claim: Claim, n_80: float) -> dict | None:
    """The run that would decide ``claim`` at 80% power: the paper's design with each unit the
    claim counts scaled by ``n_80 / n_paper`` (rounded up), as ``{"sage": {category: stories},
    "narrative": {collection: pairs}}``; None when no unit counts or ``n_80`` is not finite."""
    units = paper_units(claim)
    times = (claim.power or {}).get("paper_n", {}).get("times", 1)
    n_paper = sum(v for _, _, v in units) * times
    if not units or not all(st for st, _, _ in units) or not math.isfinite(n_80) or n_paper <= 0:
        return None
    f = n_80 / n_paper
    out: dict = {"sage": {}, "narrative": {}}
    for study, name, v in units:
        out[study][name] = int(math.ceil(v * f))
    return out


def other_reading(claim: Claim, df: pd.DataFrame, source: str) -> dict:
    """The estimate and interval of the claim's ``other_reading``, shown beside the verdict."""
    if not claim.other_reading:
        return {}
    out = {"other_reading": ", ".join(f"{k} {v}" for k, v in claim.other_reading.items())}
    row = select_row(df, replace(claim, where={**claim.where, **claim.other_reading}), source)
    if row is not None:
        for key, col in (("other_estimate", claim.column), ("other_ci_low", claim.ci_low_column),
                         ("other_ci_high", claim.ci_high_column)):
            out[key] = float(pd.to_numeric(row.get(col), errors="coerce"))
    return out


def _units(claim: Claim, row: pd.Series | None, tables_dir: Path) -> float | None:
    """The row's count of design units (``units_column``), for ``depends_on: min_units``."""
    if row is None or not claim.units_column:
        return None
    return _num(row, claim.units_column, claim, "units_column", tables_dir)


PAPER_CHECK_EMPTY = {"paper_check": "", "paper_check_verdict": ""}
PAPER_MEETS = "the paper's value meets its bound"
PAPER_FAILS = "the paper's own value fails its bound"
PAPER_WITHIN = "the paper's own value misses its bound, by less than the margin"


def _paper_sizes(claim: Claim) -> tuple[float, float] | None:
    share = (claim.power or {}).get("share")
    if not share or len(share) != 2:
        return None
    return tuple(_lookup(p["ref"], p.get("keys", []), claim.id) for p in share)


def paper_check(claim: Claim) -> dict:
    """What a paper's own numbers imply for its claim (docs/claims.md): ``paper_check`` (the
    interval and p of the paper's difference, from its SDs ``power.paper_sd`` and sizes
    ``power.share``, or its own value against its bound) and ``paper_check_verdict`` (the claim's
    rule applied to them); empty strings where the paper's numbers do not suffice."""
    pv = claim.paper_value()
    bound_only = pv is not None and math.isclose(pv, claim.rule.get("bound", math.nan))
    if bound_only:   # the paper states the bound and no value of its own ("> 94%"): nothing to check
        return dict(PAPER_CHECK_EMPTY)
    if claim.rule["type"] in ("above", "below") and pv is not None and "bound" in claim.rule:
        b, m = claim.rule["bound"], claim.margin
        t = b - m if claim.rule["type"] == "above" else b + m
        above = claim.rule["type"] == "above"
        meets = pv > b if above else pv < b
        within = pv > t if above else pv < t
        side = ">" if above else "<"
        return {"paper_check": f"the paper's own value {pv:g} against its bound {side} {b:g} (margin {m:g})",
                "paper_check_verdict": PAPER_MEETS if meets else PAPER_WITHIN if within else PAPER_FAILS}
    sizes = _paper_sizes(claim)
    if pv is None or sizes is None or claim.kind not in ("mean_diff", "cohens_d"):
        return dict(PAPER_CHECK_EMPTY)
    n_a, n_b = sizes
    p = math.nan
    if claim.kind == "mean_diff":
        sd = (claim.power or {}).get("paper_sd", {})
        if not {"sd_a", "sd_b"} <= set(sd):
            return dict(PAPER_CHECK_EMPTY)
        s_a, s_b = (_lookup(sd[k]["ref"], sd[k].get("keys", []), claim.id) for k in ("sd_a", "sd_b"))
        est, lo, hi, p = (float(v) for v in intervals.mean_diff(pv, s_a, n_a, 0.0, s_b, n_b))
        how = f"Student t on the paper's means, SDs and {n_a:g} / {n_b:g} units"
    else:
        est, lo, hi = (float(v) for v in intervals.cohens_d(pv, n_a, n_b))
        how = f"normal interval of the paper's d with {n_a:g} / {n_b:g} units"
    v = decide(claim.rule, paper_value=pv, estimate=est, ci_low=lo, ci_high=hi, p=None if math.isnan(p) else p)
    text = f"{how}: {est:.3g} [{lo:.3g}, {hi:.3g}]" + (f", p = {p:.2g}" if not math.isnan(p) else "")
    return {"paper_check": text, "paper_check_verdict": v.verdict}


def evaluate(claim: Claim, tables_dir: Path, knobs: dict, interim_dir: Path | None = None) -> dict:
    """One scorecard row for ``claim``, by the questions of the module docstring; ``run_note`` (and
    the reason's end) says what of the run does not change the verdict but should be seen: a tree
    with uncommitted changes outside the claim's code (:func:`judgelab.claims.design.notes`)."""
    rec = _evaluate(claim, tables_dir, knobs, interim_dir)
    csv = Path(tables_dir) / f"{claim.table}.csv"
    prov = provenance.read_sidecar(csv) if csv.exists() and provenance.sidecar_path(csv).exists() else None
    note = "; ".join(design.notes(claim, prov))
    rec["run_note"] = note
    if note and rec.get("verdict") not in (NOT_RUN, NOT_TESTABLE):
        rec["reason"] = f"{rec['reason']} [{note}]"
    return rec


def _evaluate(claim: Claim, tables_dir: Path, knobs: dict, interim_dir: Path | None = None) -> dict:
    pv = claim.paper_value()
    rec = {c: None for c in COLUMNS}
    rec.update(claim_id=claim.id, study=claim.study, label=claim.label, paper_value=pv, llm_claim=claim.llm,
               unit=claim.unit, table=claim.table, column=claim.column, notebook=claim.notebook,
               function=claim.function, location=claim.location, wording=claim.wording,
               rule=claim.rule["type"], margin=claim.margin, margin_reason=claim.margin_reason,
               depends_on=", ".join(claim.depends_on), design_differences="", **paper_check(claim))
    csv = Path(tables_dir) / f"{claim.table}.csv"
    if not csv.exists():
        rec.update(verdict=NOT_RUN, reason=f"{csv.name} not written: run notebook {claim.notebook}",
                   **claim_power(claim, pv, knobs))
        return rec
    df = pd.read_csv(csv)
    prov = provenance.read_sidecar(csv) if provenance.sidecar_path(csv).exists() else None
    rec["judge"] = (prov or {}).get("judge", "unknown (no provenance sidecar)")
    embedded = bool((prov or {}).get("embedded_small_model")) or (claim.llm and prov is None)
    rec["embedded_judge"] = embedded
    if claim.llm and embedded:
        reason = ("no provenance sidecar: the judge is unknown" if prov is None
                  else "an LLM-judgement claim; this run's judge is the embedded 135M model")
        rec.update(verdict=NOT_TESTABLE, reason=reason, **claim_power(claim, pv, knobs))
        return rec
    if claim.column_pending and claim.column not in df.columns:
        rec.update(verdict=NOT_RUN, reason=f"column {claim.column} not in {csv.name} yet (pending)",
                   **claim_power(claim, pv, knobs))
        return rec
    row = select_row(df, claim, csv.name)
    rec.update(other_reading(claim, df, csv.name))
    diffs = design.differences(claim, prov, _units(claim, row, tables_dir))
    if row is None:  # the run lacks these units (e.g. VisPub outside the paper profile): say why, if known
        why = [d for d in diffs if "units" not in d]
        rec.update(verdict=NOT_RUN, reason=f"no row of {csv.name} matches {claim.where} in this run"
                                           + (f" ({'; '.join(why)})" if why else ""),
                   design_differences="; ".join(diffs), **claim_power(claim, pv, knobs))
        return rec
    if diffs:
        rec.update(verdict=NOT_COMPARABLE, reason="design differs: " + "; ".join(diffs),
                   design_differences="; ".join(diffs))
    est = lo = hi = p = math.nan
    if row is not None:
        est = float(pd.to_numeric(row[claim.column], errors="coerce"))
        # "none": the table's interval, if any, does not cover at the claim's design (its note says why)
        if claim.ci_columns in ("table", "fallback") and claim.ci_low_column in row.index and claim.ci_high_column in row.index:
            lo, hi = (float(pd.to_numeric(row[c], errors="coerce")) for c in (claim.ci_low_column, claim.ci_high_column))
            rec["ci_source"] = "table"
            rec["ci_method"] = str(row["ci_method"]) if "ci_method" in row.index else ""
        else:
            lo, hi = (fallback_interval(claim, row, est, tables_dir, interim_dir) if np.isfinite(est)
                      else (math.nan, math.nan))
            rec["ci_source"] = "scorecard fallback" if claim.inputs else NO_INTERVAL
            rec["ci_method"] = (("Student t over unit values (" + claim.inputs["tidy"]["name"] + ")")
                                if "tidy" in claim.inputs else intervals.METHODS[claim.kind]) if claim.inputs else ""
            if claim.inputs and not np.isfinite(lo) and np.isfinite(est):
                rec["ci_method"] = (f"{rec['ci_method']}: too few units for an interval "
                                    f"(fewer than {intervals.MIN_UNITS[claim.kind]} per group)")
        if claim.reciprocal:
            est, lo, hi, why = reciprocal(est, lo, hi, claim.offset)
            if why:
                rec["ci_method"] = f"{rec['ci_method']}; {why}".lstrip("; ")
        if claim.p_column:
            p = float(pd.to_numeric(row.get(claim.p_column), errors="coerce"))
        rec["n"] = _n_units(claim, row, tables_dir)
        if claim.kind == "proportion" and rec["ci_source"] == "table" and np.isfinite(rec["n"]) and np.isfinite(est):
            # a share's cluster bootstrap undercovers near 0 and 1 (a constant at 0 or 1): the verdict
            # reads Wilson's interval at the effective n, the design effect from the bootstrap's SE
            se = (hi - lo) / (2 * intervals.Z95) if np.isfinite(lo) and np.isfinite(hi) else math.nan
            est, lo, hi = proportion_ci_design_effect(est, rec["n"], se)
            rec["ci_method"] = (f"Wilson at the effective n (n / design effect, from the table's "
                                f"{rec['ci_method'] or 'interval'})")
        if "tidy" in claim.inputs and interim_dir is not None:
            values = tidy_values(claim, Path(interim_dir))
            rec["n"] = float(len(values)) if values is not None else math.nan
    rec.update(estimate=est, ci_low=lo, ci_high=hi,
               ci_width=hi - lo if np.isfinite(lo) and np.isfinite(hi) else math.inf)
    if diffs:  # the numbers are shown, for looking at; no rule reads them
        rec.update(**claim_power(claim, pv, knobs))
        return rec
    v = decide(claim.rule, paper_value=pv, estimate=est, ci_low=lo, ci_high=hi, p=p if np.isfinite(p) else None)
    reason = v.reason
    if v.verdict == INCONCLUSIVE and rec["ci_source"] == NO_INTERVAL:
        reason = (f"no valid interval to test it by: {claim.note}"
                  if claim.ci_columns == "none" and claim.ci_low_column in row.index and claim.note
                  else f"{csv.name} gives a point estimate only, with no interval to test it by")
    rec.update(verdict=v.verdict, reason=reason, decisive_width=v.decisive_width,
               **claim_power(claim, pv, knobs))
    return rec


def scorecard(claims: list[Claim], tables_dir: Path, knobs: dict, interim_dir: Path | None = None,
              register_identity=None) -> pd.DataFrame:
    """The scorecard of every claim (one row each, :data:`COLUMNS`), in the register's order;
    ``register_identity`` (:func:`judgelab.claims.register.identity`) labels every row with the
    register read (its sha256 and fixing commit; another register says so on every row)."""
    card = pd.DataFrame([evaluate(c, tables_dir, knobs, interim_dir) for c in claims], columns=COLUMNS)
    if register_identity is not None:
        card["register"] = register_identity.label
        card["register_sha256"] = register_identity.sha256
        if not register_identity.committed_register:
            card["reason"] = "[another register] " + card["reason"].astype(str)
    return card


#: Notebook 14's table of each claim across the analysis choices
#: (:func:`judgelab.narrative.analyses.robustness.claims_robustness`), and the columns of it the
#: scorecard shows beside a verdict, under their scorecard names.
ROBUSTNESS_TABLE = "narr_claims_robustness"
ROBUSTNESS_COLUMNS = {"robustness": "robustness", "n_specifications": "robustness_n_specifications",
                      "n_reproduced": "robustness_n_reproduced", "share_reproduced": "robustness_share_reproduced",
                      "estimate_min": "robustness_estimate_min", "estimate_max": "robustness_estimate_max"}
ROBUSTNESS_NOT_RUN = "notebook 14 (robustness) has not run in this output root: no claim is labelled robust or fragile"
ROBUSTNESS_NOT_IN_GRID = "not in notebook 14's grid (only the news mathematics of Tables 1 and 4 is)"


def with_robustness(card: pd.DataFrame, tables_dir: Path, profile: str | None) -> pd.DataFrame:
    """``card`` with notebook 14's robustness beside each verdict: for each claim its grid covers,
    the label (robust / fragile / ...), the defensible specifications, how many and what share
    reproduce the claim, and the range of the estimate (:data:`ROBUSTNESS_COLUMNS`, a left join
    on ``claim_id``); ``robustness_note`` says why a row has none: the claim is not in the grid,
    notebook 14 has not run, or its table is of another profile than ``profile`` (the scorecard's)."""
    out = card.drop(columns=[*ROBUSTNESS_COLUMNS.values(), "robustness_note"], errors="ignore")
    csv = Path(tables_dir) / f"{ROBUSTNESS_TABLE}.csv"
    note = ""
    if not csv.exists():
        note = ROBUSTNESS_NOT_RUN
    else:
        sidecar = provenance.read_sidecar(csv) if provenance.sidecar_path(csv).exists() else {}
        theirs = sidecar.get("profile")
        if profile is not None and theirs != profile:
            note = (f"{csv.name} is of profile {theirs or 'unknown (no provenance sidecar)'}, this scorecard of "
                    f"{profile}: re-run notebook 14 with --profile {profile}")
    if note:
        return out.assign(**{c: math.nan for c in ROBUSTNESS_COLUMNS.values()}, robustness_note=note)
    table = pd.read_csv(csv)
    missing = ({"claim_id", *ROBUSTNESS_COLUMNS}) - set(table.columns)
    if missing:
        raise ValueError(f"{csv}: missing column(s) {', '.join(sorted(missing))}; re-run notebook 14")
    if table["claim_id"].duplicated().any():
        raise ValueError(f"{csv}: claim_id {table.loc[table['claim_id'].duplicated(), 'claim_id'].iloc[0]!r} "
                         "appears twice; re-run notebook 14")
    cols = table[["claim_id", *ROBUSTNESS_COLUMNS]].rename(columns=ROBUSTNESS_COLUMNS)
    out = out.merge(cols, on="claim_id", how="left", validate="one_to_one")
    out["robustness_note"] = np.where(out["robustness"].isna(), ROBUSTNESS_NOT_IN_GRID, "")
    return out


def verdict_counts(card: pd.DataFrame) -> pd.DataFrame:
    """Claims per study and verdict, the verdicts in their vocabulary's order."""
    counts = card.groupby(["study", "verdict"]).size().unstack(fill_value=0)
    return counts[[v for v in VERDICTS if v in counts.columns]]


def chance_statement(card: pd.DataFrame) -> dict:
    """How many verdicts to expect by chance alone at 95%, this run's and the register's."""
    decided = int(card["verdict"].isin(DECIDED).sum())
    return {"claims": len(card), "decided": decided, "expected_wrong_decided": expected_by_chance(decided),
            "expected_wrong_register": expected_by_chance(len(card))}


def run_judge(card: pd.DataFrame) -> tuple[str | None, str | None]:
    """(backend, model) of the judge behind the tables read: the embedded one if any."""
    named = sorted({j for j in card["judge"].dropna() if ":" in str(j) and j != "none"})
    embedded = card["embedded_judge"].fillna(False).astype(bool) & card["judge"].isin(named)
    pick = sorted(set(card.loc[embedded, "judge"])) or named
    if not pick:
        return None, None
    backend, _, model = pick[0].partition(":")
    return backend, model


def power_table(card: pd.DataFrame) -> pd.DataFrame:
    """The LLM claims' power columns: what a live run must include."""
    cols = ["claim_id", "verdict", "paper_value", "n", "n_80_paper", "n_paper", "power_unit", "power_note"]
    return card.loc[card["llm_claim"].astype(bool), cols].reset_index(drop=True)
