"""The schemas of the interim files (CONTRIBUTING.md, "Interim files"), checked with pandera.

Every table one notebook passes to another has a contract here: required columns, dtypes,
allowed values and ranges, and the rules that tie columns together (a validator track has round 1;
a failed reply has no score; a path starts at its source). :func:`check` raises
:class:`ContractError` naming the file, each column, what was wrong and the fix. A name pattern
maps to one schema (``sage_rows_L*``, ``narr_documents_*``).

Dtypes are coerced only where nothing can change meaning (integers to floats, whole floats to
integers, an empty or all-``bool`` object column to ``bool``): text never becomes a number or a
flag (``"False"`` would turn into True) and 1.5 never becomes 1.

Allowed values are written here, not imported, because this module sits on the floor below the
studies; ``tests/test_interim_contracts.py`` checks the studies' real writers against them.
"""
from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from judgelab.notebook_files import writers_of

CATEGORIES = ("canonical", "pulp", "llm")
TIERS = ("high", "average", "low", "")
LAYERS = ("L4", "L5", "L6")
SAGE_MODES = ("content", "title")
TRACKS = ("evaluator", "validator_blind", "validator_review")
STATUSES = ("ok", "failed")
#: reasoning efforts a table may record as sent (judgelab.gateway.reasoning.EFFORTS)
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
EVIDENCE_STRENGTHS = ("strong", "moderate", "weak", "absent", "")
TRUST_LEVELS = ("high", "medium", "low")
PATH_METHODS = ("maxcap", "random")
STRATA = ("within_short", "within_long", "cross_close", "cross_far", "hub_peripheral", "spatial_extremes")
#: a pair the user named (ENDPOINTS, judgelab.narrative.paths.named_endpoints) instead of a sampled stratum
NAMED_STRATUM = "named"
JUDGE_MODES = ("simple", "cot", "standard", "complex")
SAGE_SCORE_RANGE = (1.0, 5.0)      # the SAGE paper, Table 13
JUDGE_SCORE_RANGE = (1.0, 10.0)    # the Narrative paper, section 3.3 (1-10 per criterion)


class ContractError(ValueError):
    """An interim file breaks its contract (the message names file, column, problem, fix)."""


class InterimFileMissing(ContractError, FileNotFoundError):
    """An interim file is not there; the message names the notebook that writes it."""


# ---------------------------------------------------------------- column kinds

#: The dtype family a column's kind demands before any coercion: text, number or flag.
_FAMILY = {"int64": "number", "Int64": "number", "float64": "number", "bool": "flag"}


def _family(column: pa.Column) -> str | None:
    return (column.metadata or {}).get("family") or _FAMILY.get(str(column.dtype))


def _col(dtype, *checks: pa.Check, nullable: bool = False, **kw) -> pa.Column:
    return pa.Column(dtype, list(checks), nullable=nullable, coerce=dtype is not None, **kw)


def text(*checks: pa.Check, nullable: bool = False) -> pa.Column:
    """A text column. Its values are checked to be ``str`` but its dtype is left as written (object
    or pandas' ``str``): casting to pandera's ``string[pyarrow]`` would turn None into ``pd.NA``,
    on which comparisons downstream raise instead of giving False."""
    return pa.Column(None, list(checks), nullable=nullable, metadata={"family": "text"})


def one_of(values, nullable: bool = False) -> pa.Column:
    return text(pa.Check.isin(list(values)), nullable=nullable)


def whole(*checks: pa.Check, nullable: bool = False) -> pa.Column:
    """An integer column (``Int64`` when it may hold missing values)."""
    return _col("Int64" if nullable else "int64", *checks, nullable=nullable)


def real(*checks: pa.Check, nullable: bool = True) -> pa.Column:
    return _col("float64", *checks, nullable=nullable)


def optional(column: pa.Column) -> pa.Column:
    """``column``, not required: a table without it is still valid (checked when present)."""
    column.required = False
    return column


def flag() -> pa.Column:
    return _col("bool")


def between(lo: float, hi: float) -> pa.Check:
    """``lo <= x <= hi``; missing values are left to the column's ``nullable``."""
    return pa.Check.in_range(lo, hi, ignore_na=True)


def _element_check(test: Callable[[object], bool], name: str, error: str) -> pa.Check:
    return pa.Check(lambda s: s.map(test).astype(bool), name=name, error=error)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def int_list() -> pa.Column:
    """A column of lists of integers (parquet gives them back as NumPy arrays)."""
    return pa.Column(None, [_element_check(
        lambda v: isinstance(v, (list, tuple, np.ndarray)) and all(_is_int(x) for x in v),
        "list_of_int", "a list of integers")], nullable=False)


def text_list() -> pa.Column:
    return pa.Column(None, [_element_check(
        lambda v: isinstance(v, (list, tuple, np.ndarray)) and all(isinstance(x, str) for x in v),
        "list_of_str", "a list of strings")], nullable=False)


def bool_or_none() -> pa.Column:
    return pa.Column(None, [_element_check(
        lambda v: v is None or isinstance(v, (bool, np.bool_)) or (isinstance(v, float) and math.isnan(v)),
        "bool_or_none", "True, False or None")], nullable=True)


def datetime() -> pa.Column:
    return pa.Column(None, [pa.Check(lambda s: pd.api.types.is_datetime64_any_dtype(s),
                                     name="datetime", error="datetimes")], nullable=False)


def rule(columns: tuple[str, ...], test: Callable[[pd.DataFrame], pd.Series], says: str) -> pa.Check:
    """A rule across ``columns``, true on every row that keeps it; its message names the columns."""
    return pa.Check(test, name="rule", error=f"columns {', '.join(repr(c) for c in columns)}: {says}")


# ---------------------------------------------------------------- the schemas

def _corpus(name: str) -> pa.DataFrameSchema:
    return pa.DataFrameSchema({
        "story_id": text(pa.Check.str_length(min_value=1)),
        "category": one_of(CATEGORIES), "title": text(), "author": text(),
        "year": whole(nullable=True), "translator": text(), "model": text(), "tier": one_of(TIERS),
        "words": whole(pa.Check.ge(0)), "in_range": flag(), "text": text(pa.Check.str_length(min_value=1)),
    }, unique=["story_id"], strict=True)


def _l123_features(name: str) -> pa.DataFrameSchema:
    return pa.DataFrameSchema({
        "story_id": text(), "category": one_of(CATEGORIES),
        r"^l[123]_.+$": pa.Column("float64", nullable=True, coerce=True, regex=True),
    }, unique=["story_id"], strict=True, checks=[rule(
        ("l1_*", "l2_*", "l3_*"),
        lambda df: all(any(str(c).startswith(p) for c in df.columns) for p in ("l1_", "l2_", "l3_")),
        "at least one feature column of each layer")])


def _layer_of(name: str) -> str | None:
    tail = name.rsplit("_", 1)[-1]
    return tail if tail in LAYERS else None


def _sage_rows(name: str, modes=SAGE_MODES) -> pa.DataFrameSchema:
    layer = _layer_of(name)
    return pa.DataFrameSchema({
        "story_id": text(), "category": one_of(CATEGORIES), "tier": one_of(TIERS),
        "layer": one_of([layer] if layer else LAYERS), "mode": one_of(modes), "track": one_of(TRACKS),
        "round": whole(between(1, 5)), "dimension": text(),
        "score": real(between(*SAGE_SCORE_RANGE)), "confidence": real(between(1, 5)),
        "evidence_strength": one_of(EVIDENCE_STRENGTHS), "evidence": text(),
        "status": one_of(STATUSES), "r4_score_changed": flag(), "truncated": flag(),
        "backend": text(), "model": text(), "template_version": text(), "profile": text(),
    }, strict=True, checks=[
        rule(("track", "round"), lambda df: (df["track"] == "evaluator") | (df["round"] == 1),
             "a validator track has round 1"),
        rule(("status", "score"), lambda df: (df["status"] == "ok") | df["score"].isna(),
             "a failed reply has score NaN, never a value"),
    ])


def _sage_summary(name: str) -> pa.DataFrameSchema:
    layer = _layer_of(name)
    lo, hi = SAGE_SCORE_RANGE
    return pa.DataFrameSchema({
        "story_id": text(), "category": one_of(CATEGORIES), "tier": one_of(TIERS),
        "layer": one_of([layer] if layer else LAYERS), "mode": one_of(SAGE_MODES),
        "overall_score": real(between(lo, hi)), "validator_blind_overall": real(between(lo, hi)),
        "eval_validator_mad": real(between(0, hi - lo)), "max_r4_r5_change": real(between(0, hi - lo)),
        "trust_level": one_of(TRUST_LEVELS, nullable=True), "status": one_of(STATUSES),
        "n_repairs": whole(pa.Check.ge(0)), "n_failures": whole(pa.Check.ge(0)),
        "knows_work": bool_or_none(), "truncated": flag(),
        # the sampling as sent (judgelab.gateway.reasoning); optional: summaries written before it are valid
        "temperature": optional(real(between(0, 2))),
        "reasoning_effort": optional(one_of(REASONING_EFFORTS, nullable=True)),
        "max_tokens": optional(whole(pa.Check.gt(0), nullable=True)),
        "backend": text(), "model": text(), "profile": text(),
    }, unique=["story_id", "mode"], strict=True)


def _narr_documents(name: str) -> pa.DataFrameSchema:
    return pa.DataFrameSchema({
        "doc": whole(pa.Check.ge(0)), "title": text(), "date": datetime(), "text": text(),
        "cluster": whole(pa.Check.ge(-1)),   # HDBSCAN labels noise -1
    }, unique=["doc"], strict=True)


def _narr_paths(name: str) -> pa.DataFrameSchema:
    def lengths_agree(df):
        return (df["path"].map(len) == df["length"]) & (df["titles"].map(len) == df["length"])

    def ends_agree(df):
        return pd.Series([len(p) > 0 and p[0] == s and p[-1] == t
                          for p, s, t in zip(df["path"], df["source"], df["target"])], index=df.index)

    return pa.DataFrameSchema({
        "collection": text(), "pair_id": whole(pa.Check.ge(0)), "stratum": one_of(STRATA + (NAMED_STRATUM,)),
        "method": one_of(PATH_METHODS), "source": whole(pa.Check.ge(0)), "target": whole(pa.Check.ge(0)),
        "path": int_list(), "titles": text_list(), "length": whole(pa.Check.ge(2)),
        "min_coherence": real(between(0, 1), nullable=False), "mean_coherence": real(between(0, 1), nullable=False),
        "reliability": real(between(0, 1), nullable=False), "temporal_span_days": real(pa.Check.ge(0)),
        "coherence_var": real(pa.Check.ge(0), nullable=False), "weak_link_ratio": real(between(0, 1)),
        "seed": whole(),
    }, strict=True, unique=["collection", "seed", "pair_id", "method"], checks=[
        rule(("length", "path", "titles"), lengths_agree, "length is the number of documents in path and in titles"),
        rule(("path", "source", "target"), ends_agree, "a path starts at source and ends at target"),
        rule(("min_coherence", "mean_coherence"), lambda df: df["min_coherence"] <= df["mean_coherence"] + 1e-12,
             "min_coherence <= mean_coherence"),
    ])


def _narr_judge_scores(name: str) -> pa.DataFrameSchema:
    return pa.DataFrameSchema({
        "collection": text(), "pair_id": whole(pa.Check.ge(0)), "method": one_of(PATH_METHODS),
        "mode": one_of(JUDGE_MODES), "agent": whole(pa.Check.ge(0)), "temperature": real(between(0, 2)),
        # the sampling as sent (judgelab.gateway.reasoning); optional: tables written before it are valid
        "top_p": optional(real(between(0, 1))), "reasoning_effort": optional(one_of(REASONING_EFFORTS, nullable=True)),
        "max_tokens": optional(whole(pa.Check.gt(0))), "seed": whole(), "score": real(between(*JUDGE_SCORE_RANGE)), "status": one_of(STATUSES),
        "input_tokens": whole(pa.Check.ge(0), nullable=True), "output_tokens": whole(pa.Check.ge(0), nullable=True),
        "latency_s": real(pa.Check.ge(0)), "cached": flag(),
        "backend": text(), "model": text(), "profile": text(),
    }, strict=True, unique=["collection", "pair_id", "method", "mode", "agent"], checks=[
        rule(("status", "score"), lambda df: (df["status"] == "ok") == df["score"].notna(),
             "a reply has a score exactly when its status is ok"),
    ])


@dataclass(frozen=True)
class Contract:
    """One interim table: its file name pattern and the schema of a file of that name."""

    pattern: str
    schema: Callable[[str], pa.DataFrameSchema]


CONTRACTS: tuple[Contract, ...] = (
    Contract("corpus", _corpus),
    Contract("sage_l123_features", _l123_features),
    Contract("sage_rows_L*", _sage_rows),
    # the anonymous-author sensitivity run is title mode only (runner.run_title_anonymous)
    Contract("sage_rows_anonymous_L*", lambda name: _sage_rows(name, modes=["title"])),
    Contract("sage_summary_L*", _sage_summary),
    Contract("narr_documents_*", _narr_documents),
    Contract("narr_paths", _narr_paths),
    Contract("narr_paths_seeds", _narr_paths),
    Contract("narr_judge_scores", _narr_judge_scores),
)


def contract_for(name: str) -> Contract:
    """The contract of the interim table ``name`` (a :class:`ContractError` if it has none)."""
    for c in CONTRACTS:
        if fnmatch.fnmatchcase(name, c.pattern):
            return c
    raise ContractError(
        f"interim table {name!r} has no contract; add its schema to judgelab.contracts.CONTRACTS and "
        f"its row to CONTRIBUTING.md ('Interim files') (known: {', '.join(c.pattern for c in CONTRACTS)})")


# ---------------------------------------------------------------- the fix and the message

def fix_for(name: str, when: str) -> str:
    """What to do about a broken file: re-run its notebook (read), or mend its writer (write)."""
    writers = writers_of(name)
    nbs = " or ".join(writers) or "?"
    makes = ", ".join(f"`make nb-{w}`" for w in writers)
    if when == "write":
        return (f"the code that builds it for notebook {nbs} breaks the contract in CONTRIBUTING.md "
                "('Interim files'): mend the writer (or change the contract there and in judgelab.contracts)")
    return f"re-run notebook {nbs} ({makes}) with this PROFILE and output root"


def _show(values, n: int = 3) -> str:
    vals = list(dict.fromkeys(repr(v.item() if hasattr(v, "item") else v) for v in values))
    more = f" and {len(vals) - n} more" if len(vals) > n else ""
    return ", ".join(vals[:n]) + more


_BOUNDS = {"greater_than_or_equal_to": ">=", "greater_than": ">", "less_than_or_equal_to": "<=", "less_than": "<"}


def _range_words(check: str) -> str:
    """``in_range(1.0, 5.0)`` -> ``1.0 to 5.0``; ``greater_than_or_equal_to(0)`` -> ``>= 0``."""
    name, args = check.split("(", 1)
    args = args.rstrip(")")
    if name == "in_range":
        return " to ".join(a.strip() for a in args.split(",")[:2])
    return f"{_BOUNDS.get(name, name)} {args}"


def _problem(context: str, column, check: str, cases: pd.DataFrame, schema: pa.DataFrameSchema) -> str:
    """One sentence for the failures of one check (pandera's failure cases of that check)."""
    col = f"column {column!r}"
    values = cases["failure_case"].tolist()
    rows = sorted({int(i) for i in cases["index"].dropna().tolist()})
    where = f" in row(s) {_show(rows)}" if rows else ""
    if check == "column_in_dataframe":
        return f"column {values[0]!r} is missing"
    if check == "column_in_schema":
        return f"column {values[0]!r} is not in the contract"
    if check == "multiple_fields_uniqueness":
        return f"the key ({', '.join(map(str, schema.unique))}) repeats{where}; it must be unique"
    if context == "DataFrameSchema":   # a rule across columns: its text names them
        return f"{check}: broken{where}"
    if check == "not_nullable":
        return f"{col} has {len(values)} missing value(s){where}"
    if check.startswith(("coerce_dtype(", "dtype(")):
        return f"{col} has {_show(values)}, not {check.split('(', 1)[1].rstrip(')')}"
    if check.startswith("isin("):
        allowed = check[len("isin("):-1].strip("[]").replace("'", "")
        return f"{col} has {_show(values)} (allowed: {allowed or 'nothing'})"
    if check.startswith("str_length("):
        return f"{col} has empty text{where}"
    if check.startswith(("in_range(", "greater_than", "less_than")):
        return f"{col} has {_show(values)}{where} (allowed: {_range_words(check)})"
    return f"{col} has {_show(values)}{where}, which is not {check}"


def _foreign(s: pd.Series, family: str, whole_numbers: bool) -> tuple[list, str]:
    """Values of ``s`` outside ``family`` (and what belongs there); vectorised for typed columns."""
    values = s.dropna()
    if family == "text":
        if isinstance(s.dtype, pd.StringDtype) or (len(values) == 0):
            return [], ""
        return [v for v in values if not isinstance(v, str)], "text"
    if family == "flag":
        if pd.api.types.is_bool_dtype(s):
            return [], ""
        return [v for v in values if not isinstance(v, (bool, np.bool_))], "True/False"
    if pd.api.types.is_bool_dtype(s):
        return values.tolist(), "numbers"
    if not pd.api.types.is_numeric_dtype(s):
        bad = [v for v in values if isinstance(v, (str, bool, np.bool_)) or not isinstance(v, (int, float, np.number))]
        if bad:
            return bad, "numbers"
        values = values.astype(float)
    if whole_numbers and pd.api.types.is_float_dtype(values):
        return values[values % 1 != 0].tolist(), "whole numbers"
    return [], ""


def _families_ok(df: pd.DataFrame, schema: pa.DataFrameSchema) -> list[str]:
    """Columns whose values are of another family than their kind (text where numbers belong, ...):
    coercing those would change their meaning, so they are reported, never cast."""
    out = []
    for name, column in schema.columns.items():
        family = _family(column)
        if family is None:
            continue
        names = [c for c in df.columns if re.match(name, str(c))] if column.regex else [name]
        for cname in (c for c in names if c in df.columns):
            bad, belongs = _foreign(df[cname], family, str(column.dtype) in ("int64", "Int64"))
            if bad:
                out.append(f"column {cname!r} has {_show(bad)}; expected {belongs}")
    return out


def check(df: pd.DataFrame, name: str, path: Path | str, when: str = "read") -> pd.DataFrame:
    """``df`` validated against the contract of the interim table ``name`` (coerced where
    harmless); ``path`` and ``when`` (write/read) enter the :class:`ContractError`'s message, one
    line per problem."""
    schema = contract_for(name).schema(name)
    problems = _families_ok(df, schema)
    if not problems:
        try:
            return schema.validate(df, lazy=True)
        except SchemaErrors as err:
            cases = err.failure_cases
            for (context, chk), by_check in cases.groupby(["schema_context", "check"], dropna=False, sort=False):
                if context == "DataFrameSchema" and chk not in ("column_in_dataframe", "column_in_schema"):
                    problems.append(_problem(context, None, str(chk), by_check, schema))
                    continue
                for column, group in by_check.groupby("column", dropna=False, sort=False):
                    problems.append(_problem(context, column, str(chk), group, schema))
    lead = f"{path}: " + ("" if len(problems) == 1 else f"{len(problems)} problems: ")
    raise ContractError(lead + "; ".join(dict.fromkeys(problems)) + "; " + fix_for(name, when))
