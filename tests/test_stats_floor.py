"""The statistics floor: its examples run (doctests), no study module writes its own copy of a
floor helper, and two degenerate designs that the floor once got wrong.

The floor's helpers (``judgelab.stats``): the Wilson interval and the t interval and the
percentile bootstrap of independent units (``stats.intervals``), Holm / Bonferroni over a stated
family (``stats.tests.adjust``), the cluster bootstraps (``stats.bootstrap``,
``stats.resampling``), and one degeneracy rule with a tolerance (``stats.rules``).
"""
import ast
import doctest
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import judgelab.stats
from judgelab.sage.analysis import genre
from judgelab.stats import reliability, resampling

LIB = Path(judgelab.stats.__file__).resolve().parents[1]
STATS = LIB / "stats"
# No exception: the claims scorecard's intervals from summary numbers call the floor's vectorised
# forms (t, pooled t, Fisher z, ICC, d, AUC, ratio), so the whole library is scanned.
ALLOWED: set = set()
# Offences known and scheduled, by file and kind, each with its fix; the test fails when one is
# fixed and still listed here, so the list only shrinks.
PENDING: dict = {}

FORBIDDEN_IMPORTS = {
    "statsmodels.stats.multitest": "Holm / Bonferroni: judgelab.stats.tests.adjust",
    "statsmodels.stats.proportion": "Wilson: judgelab.stats.intervals.proportion_ci",
}
FORBIDDEN_NAMES = {"multipletests": FORBIDDEN_IMPORTS["statsmodels.stats.multitest"],
                   "proportion_confint": FORBIDDEN_IMPORTS["statsmodels.stats.proportion"]}
# A function named for a floor statistic is a copy unless it calls the floor (a thin wrapper that
# maps a study's columns onto judgelab.stats is fine; a body of its own is not).
FORBIDDEN_DEFS = re.compile(r"wilson|holm|bonferroni|adjust_p$|icc|intraclass|cohens?_d|hedges_g|fisher_?(z|ci)"
                            r"|t_interval|t_ci$|pooled_(sd|sigma|std)|krippendorff|kendalls?_w|percentile_interval"
                            r"|(^|_)bootstrap(_ci)?$", re.I)
FORMULAS = {
    # the Wilson centre (p + z^2 / 2n) / (1 + z^2 / n), however the names are spelled
    "a Wilson interval (judgelab.stats.intervals.proportion_ci)": re.compile(r"\*\*\s*2\s*/\s*\(\s*2\s*\*\s*\w+\s*\)"),
    # degeneracy by exact equality instead of the rules' tolerance
    "an exact-equality degeneracy test (judgelab.stats.rules.is_constant)": re.compile(r"np\.all\(\s*(\w+)\s*==\s*\1\[0\]\s*\)"),
    "a tolerance of its own (judgelab.stats.rules.REL_TOL / negligible)": re.compile(r"^\s*\w*(TOL|TOLERANCE|EPS)\w*\s*=\s*1e-9\b", re.M),
}
# Tell-tale calls of the floor's formulas (the attribute chain's tail): Fisher's z, a t or F
# quantile (a t interval, an F-based ICC interval).
FORMULA_CALLS = {
    ("arctanh",): "Fisher's z (judgelab.stats.correlation.fisher_z_ci)",
    ("atanh",): "Fisher's z (judgelab.stats.correlation.fisher_z_ci)",
    ("t", "ppf"): "a t quantile: a t interval (judgelab.stats.intervals.t_interval / t_interval_from_summary)",
    ("t", "isf"): "a t quantile: a t interval (judgelab.stats.intervals.t_interval / t_interval_from_summary)",
    ("f", "ppf"): "an F quantile: an F-based ICC interval (judgelab.stats.reliability.icc / icc2_1 / icc_from_f)",
}
PERCENTILE_CALLS = {"percentile", "quantile", "nanpercentile", "nanquantile"}
CI_BOUNDS = {2.5, 97.5, 0.025, 0.975}


def _tail(func: ast.AST, n: int, aliases: dict | None = None) -> tuple:
    """The last n names of a call's attribute chain, np.random.x -> ("random", "x"), with an
    imported alias read as what it imports (``from scipy.stats import t as student``)."""
    names = []
    while isinstance(func, ast.Attribute):
        names.insert(0, func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        names.insert(0, (aliases or {}).get(func.id, func.id))
    return tuple(names[-n:])


def _aliases(nodes: list) -> dict[str, str]:
    return {a.asname: a.name for node in nodes if isinstance(node, ast.ImportFrom)
            for a in node.names if a.asname}


def _pows_of_two(node: ast.AST) -> int:
    return sum(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and isinstance(n.right, ast.Constant)
               and n.right.value == 2 for n in ast.walk(node))


def _formula_offences(nodes: list) -> list[str]:
    """Formulas by their shape: Fisher z, t / F quantiles, a pooled or averaged SD, an ICC from mean
    squares, a 95% percentile interval."""
    out = []
    aliases = _aliases(nodes)
    for node in nodes:
        if isinstance(node, ast.Call):
            for k in (2, 1):
                what = FORMULA_CALLS.get(_tail(node.func, k, aliases))
                if what and len(_tail(node.func, k, aliases)) == k:
                    out.append(f"line {node.lineno}: writes {what}")
                    break
            name = _tail(node.func, 1)
            if name == ("sqrt",) and node.args and isinstance(node.args[0], ast.BinOp) \
                    and isinstance(node.args[0].op, ast.Div) and isinstance(node.args[0].left, ast.BinOp) \
                    and isinstance(node.args[0].left.op, ast.Add) and _pows_of_two(node.args[0].left) >= 2:
                out.append(f"line {node.lineno}: writes a pooled / averaged SD, sqrt((.. s1**2 + .. s2**2) / ..) "
                           "(judgelab.stats.effects.cohens_d)")
            if name and name[0] in PERCENTILE_CALLS and any(
                    isinstance(c, ast.Constant) and isinstance(c.value, (int, float)) and c.value in CI_BOUNDS
                    for a in node.args[1:] + [kw.value for kw in node.keywords] for c in ast.walk(a)):
                out.append(f"line {node.lineno}: writes a 95% percentile interval "
                           "(judgelab.stats.bootstrap.bootstrap / percentile_ci)")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.Sub) and all(
                    isinstance(v, ast.Name) and v.id.lower().startswith("ms") for v in (node.left.left, node.left.right)):
            out.append(f"line {node.lineno}: writes an ICC from mean squares, (MSR - MSE) / ... "
                       "(judgelab.stats.reliability.icc)")
    return out


def _floor_names(nodes: list) -> set[str]:
    """Names bound to the floor by this module's imports (``from judgelab.stats import x``,
    ``from judgelab.stats.effects import cohens_d``, ``import judgelab.stats.tests as st``)."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("judgelab.stats"):
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("judgelab.stats")}
    return names


def _calls_the_floor(fn: ast.AST, floor: set[str]) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Name) and f.id in floor:
                return True
    return False


def _study_modules():
    return sorted(p for p in LIB.rglob("*.py") if STATS not in p.parents and p not in ALLOWED)


def _offences(path: Path) -> list[str]:
    source = path.read_text()
    nodes = list(ast.walk(ast.parse(source)))
    floor = _floor_names(nodes)
    out = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module in FORBIDDEN_IMPORTS:
            out.append(f"line {node.lineno}: imports {node.module} ({FORBIDDEN_IMPORTS[node.module]})")
        elif isinstance(node, ast.Import):
            out += [f"line {node.lineno}: imports {a.name} ({FORBIDDEN_IMPORTS[a.name]})"
                    for a in node.names if a.name in FORBIDDEN_IMPORTS]
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            out.append(f"line {node.lineno}: uses {node.attr} ({FORBIDDEN_NAMES[node.attr]})")
        elif (isinstance(node, ast.Attribute) and node.attr == "bootstrap" and isinstance(node.value, ast.Name)
              and node.value.id == "stats"):
            out.append(f"line {node.lineno}: calls scipy's stats.bootstrap (judgelab.stats.intervals.mean_ci / diff_ci)")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and FORBIDDEN_DEFS.search(node.name) \
                and not node.name.startswith("paper_") and not _calls_the_floor(node, floor):
            # (paper_*: a paper's cited constants, not a computation)
            out.append(f"line {node.lineno}: defines {node.name} without calling the floor (judgelab.stats has it)")
    out += _formula_offences(nodes)
    for what, pattern in FORMULAS.items():
        for m in pattern.finditer(source):
            out.append(f"line {source.count(chr(10), 0, m.start()) + 1}: writes {what}")
    return out


def _unscheduled(path: str, offences: list[str]) -> list[str]:
    return [o for o in offences if not any(kind in o for kind in PENDING.get(path, ()))]


def test_no_study_module_reimplements_a_floor_helper():
    found = {f: o for p in _study_modules() if (o := _unscheduled(f := str(p.relative_to(LIB)), _offences(p)))}
    assert not found, "use the statistics floor (judgelab.stats) instead:\n" + "\n".join(
        f"  {f}: {'; '.join(o)}" for f, o in found.items())


def test_every_pending_offence_is_still_there():
    """A scheduled offence that was fixed leaves PENDING, so the list only shrinks."""
    fixed = [(f, kind) for f, kinds in PENDING.items() for kind in kinds
             if not any(kind in o for o in _offences(LIB / f))]
    assert not fixed, f"fixed, remove from PENDING: {fixed}"


def test_the_check_catches_a_copy(tmp_path):
    """The check itself works: a module with each kind of copy is caught."""
    copy = tmp_path / "copy.py"
    copy.write_text("from statsmodels.stats.multitest import multipletests\n"
                    "from scipy import stats\n"
                    "EPS = 1e-9\n"
                    "def share_wilson(k, n, z=1.96):\n"
                    "    p = k / n\n"
                    "    return (p + z ** 2 / (2 * n)) / (1 + z ** 2 / n)\n"
                    "def ci(x):\n"
                    "    if np.all(x == x[0]):\n"
                    "        return x[0]\n"
                    "    return stats.bootstrap((x,), np.mean)\n")
    kinds = " ".join(_offences(copy))
    for word in ("multitest", "share_wilson", "Wilson interval", "exact-equality", "tolerance of its own",
                 "stats.bootstrap"):
        assert word in kinds, word


# A module that re-implements each statistic the floor holds, under innocent names (caught by
# formula) and under telling names (caught by name), with a thin wrapper that is fine.
PLANTED = """
import math
import numpy as np
from scipy import stats
from scipy.stats import t as student
from judgelab.stats import effects

def spread(a, b):
    return (a.mean() - b.mean()) / np.sqrt((a.std(ddof=1) ** 2 + b.std(ddof=1) ** 2) / 2)

def pooled(a, b, n1, n2):
    return np.sqrt(((n1 - 1) * a ** 2 + (n2 - 1) * b ** 2) / (n1 + n2 - 2))

def band(r, n):
    z = np.arctanh(r)
    return np.tanh(z - 1.96 / np.sqrt(n - 3)), np.tanh(z + 1.96 / np.sqrt(n - 3))

def band2(r, n):
    return math.atanh(r)

def mean_band(x):
    return x.mean() - stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))

def mean_band2(x, n):
    return student.ppf(0.975, n - 1)

def agreement(msr, mse, msc, k, n):
    return (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)

def agreement_band(f, n, k):
    return f / stats.f.ppf(0.975, n - 1, n * (k - 1))

def resampled(boot):
    return np.percentile(boot, [2.5, 97.5])

def resampled2(boot, lo=0.025):
    return np.quantile(boot, [lo, 0.975])

def icc_of_raters(x):
    return x.var()

def my_cohens_d(x, y):
    return 0.0

def fisher_z(r):
    return r

def t_interval(x):
    return x

def cohens_d_rows(x, y):
    return effects.cohens_d(x, y)
"""


def test_the_check_catches_a_planted_copy_by_name_and_by_formula(tmp_path):
    copy = tmp_path / "planted.py"
    copy.write_text(PLANTED)
    found = _offences(copy)
    text = "\n".join(found)
    lines = {int(re.match(r"line (\d+)", f).group(1)) for f in found}
    planted = PLANTED.splitlines()

    def line_of(snippet):
        return next(i for i, s in enumerate(planted, 1) if snippet in s)

    for snippet in ("np.sqrt((a.std", "np.sqrt(((n1 - 1)", "np.arctanh(r)", "math.atanh(r)", "stats.t.ppf(0.975",
                    "student.ppf", "(msr - mse) / (msr", "stats.f.ppf", "np.percentile(boot", "np.quantile(boot",
                    "def icc_of_raters", "def my_cohens_d", "def fisher_z", "def t_interval"):
        assert line_of(snippet) in lines, f"not caught: {snippet}\n{text}"
    assert line_of("def cohens_d_rows") not in lines, "a thin wrapper of the floor is not a copy"


STATS_MODULES = sorted(m.name for m in pkgutil.iter_modules(judgelab.stats.__path__, "judgelab.stats."))


@pytest.mark.parametrize("name", STATS_MODULES)
def test_floor_examples_run(name):
    """The numpydoc Examples of every floor module are doctests, run here."""
    module = importlib.import_module(name)
    res = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, extraglobs={"np": np, "pd": pd})
    assert res.failed == 0, f"{name}: {res.failed} of {res.attempted} examples failed"


def _public(module):
    return [(n, obj) for n, obj in vars(module).items() if not n.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__]


@pytest.mark.parametrize("name", STATS_MODULES)
def test_every_public_function_of_the_floor_is_documented_like_pingouin(name):
    """numpydoc Parameters, Returns (functions) and Examples that are doctests (run above)."""
    module = importlib.import_module(name)
    bare = []
    for fname, obj in _public(module):
        doc = inspect.getdoc(obj) or ""
        need = ("Parameters\n", "Examples\n") + (("Returns\n",) if inspect.isfunction(obj) else ())
        missing = [s.strip() for s in need if s not in doc] + ([] if ">>>" in doc else [">>> example"])
        if missing:
            bare.append(f"{fname}: no {', '.join(missing)}")
    assert not bare, f"{name}:\n  " + "\n  ".join(bare)


# --------------------------------------------------------------------------- ICC: raters who agree

def _agreeing_raters(rng, n_items=6, k=3):
    """k raters giving each item the same rating up to ~1e-15 (the same number reached by different
    arithmetic: a story mean of one-decimal scores in another order)."""
    base = rng.integers(10, 50, n_items) / 10
    rows = []
    for i, b in enumerate(base):
        for j in range(k):
            rows.append({"item": i, "rater": j, "rating": b * (1 + rng.choice([-1, 0, 1]) * 2.2e-16 * rng.integers(1, 8))})
    return pd.DataFrame(rows)


def test_icc_recognises_raters_who_agree_to_rounding():
    rng = np.random.default_rng(0)
    for _ in range(200):
        data = _agreeing_raters(rng, n_items=int(rng.integers(3, 9)), k=int(rng.integers(2, 5)))
        out = reliability.icc(data, "item", "rater", "rating", forms=("ICC1", "ICC2", "ICC3", "ICC2k"))
        assert (out["note"] == reliability.RATERS_AGREE).all(), out[["form", "icc", "F", "note"]]
        assert (out["icc"] == 1.0).all() and np.isinf(out["F"]).all() and out["ci_low"].isna().all()


def test_mean_squares_residual_is_summed_not_subtracted():
    """Raters 1e-15 apart: the residual mean square is rounding-sized (~1e-30), not SST's noise."""
    x = pd.DataFrame([[1.0, 1.0 + 4e-16], [2.3, 2.3], [4.1 + 8e-16, 4.1]])
    ms = reliability.mean_squares(x)
    assert ms["mse"] < 1e-28 and ms["msr"] > 1


def test_bootstrap_icc_of_agreeing_raters_never_exceeds_one():
    rng = np.random.default_rng(1)
    data = _agreeing_raters(rng, n_items=8, k=3)
    matrix = data.pivot(index="item", columns="rater", values="rating").to_numpy()
    icc1, icck = resampling.weighted_icc2(matrix, resampling.cluster_weights(np.arange(8), n_boot=200, seed=0))
    assert np.nanmax(icc1) <= 1 + 1e-12 and np.nanmax(icck) <= 1 + 1e-12
    assert np.nanmin(icc1) > 1 - 1e-9


# --------------------------------------------------------------------------- mixed model that collapses

def _identical_modes(seed=3, n=12):
    """Stories whose content and title scores are identical: no residual variance within a story."""
    rng = np.random.default_rng(seed)
    gap = {"canonical": 0.0, "pulp": -0.3, "llm": -0.5}
    rows = []
    for c, g in gap.items():
        for i in range(n):
            s = round(3.5 + g + rng.normal(0, 0.5), 2)
            rows += [{"story_id": f"{c}{i}", "category": c, "layer": "L4", "mode": m, "score": s}
                     for m in ("content", "title")]
    return pd.DataFrame(rows)


def test_mixed_model_whose_residual_variance_collapses_falls_back_to_story_means():
    import statsmodels.formula.api as smf

    story = _identical_modes()
    mm = genre.genre_mixed_model(story, layers=("L4",)).set_index("contrast")
    assert (mm["ci_method"] == genre.STORY_MEAN_CI_METHOD).all()
    assert mm["note"].str.contains("residual variance collapsed").all()
    means = story.groupby(["story_id", "category"], as_index=False)["score"].mean()
    ols = smf.ols("score ~ C(category, Treatment('canonical'))", means).fit()
    for c in ("pulp", "llm"):
        name = f"C(category, Treatment('canonical'))[T.{c}]"
        r = mm.loc[f"canonical - {c}"]
        assert r["diff"] == pytest.approx(-ols.params[name])
        assert r["p"] == pytest.approx(ols.pvalues[name])
        assert (r["diff_ci_low"], r["diff_ci_high"]) == pytest.approx((-ols.conf_int().loc[name, 1], -ols.conf_int().loc[name, 0]))
    assert mm["unit"].str.startswith("story (the mean").all()


def test_mixed_model_with_residual_variance_stays_a_mixed_model():
    story = _identical_modes()
    rng = np.random.default_rng(4)
    story["score"] = story["score"] + rng.normal(0, 0.3, len(story))
    mm = genre.genre_mixed_model(story, layers=("L4",))
    assert (mm["ci_method"] == genre.MIXED_CI_METHOD).all() and (mm["note"] == "").all()
