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
# No exception: the claims scorecard's intervals from summary numbers call statsmodels' Wilson and
# scipy's t as the floor does, vectorised over the power simulation's draws.
ALLOWED: set = set()

FORBIDDEN_IMPORTS = {
    "statsmodels.stats.multitest": "Holm / Bonferroni: judgelab.stats.tests.adjust",
    "statsmodels.stats.proportion": "Wilson: judgelab.stats.intervals.proportion_ci",
}
FORBIDDEN_NAMES = {"multipletests": FORBIDDEN_IMPORTS["statsmodels.stats.multitest"],
                   "proportion_confint": FORBIDDEN_IMPORTS["statsmodels.stats.proportion"]}
FORBIDDEN_DEFS = re.compile(r"wilson|holm|bonferroni|adjust_p$", re.I)
FORMULAS = {
    # the Wilson centre (p + z^2 / 2n) / (1 + z^2 / n), however the names are spelled
    "a Wilson interval (judgelab.stats.intervals.proportion_ci)": re.compile(r"\*\*\s*2\s*/\s*\(\s*2\s*\*\s*\w+\s*\)"),
    # degeneracy by exact equality instead of the rules' tolerance
    "an exact-equality degeneracy test (judgelab.stats.rules.is_constant)": re.compile(r"np\.all\(\s*(\w+)\s*==\s*\1\[0\]\s*\)"),
    "a tolerance of its own (judgelab.stats.rules.REL_TOL / negligible)": re.compile(r"^\s*\w*(TOL|TOLERANCE|EPS)\w*\s*=\s*1e-9\b", re.M),
}


def _study_modules():
    return sorted(p for p in LIB.rglob("*.py") if STATS not in p.parents and p not in ALLOWED)


def _offences(path: Path) -> list[str]:
    source = path.read_text()
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
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
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and FORBIDDEN_DEFS.search(node.name):
            out.append(f"line {node.lineno}: defines {node.name} (the floor has it: judgelab.stats)")
    for what, pattern in FORMULAS.items():
        for m in pattern.finditer(source):
            out.append(f"line {source.count(chr(10), 0, m.start()) + 1}: writes {what}")
    return out


def test_no_study_module_reimplements_a_floor_helper():
    found = {str(p.relative_to(LIB)): o for p in _study_modules() if (o := _offences(p))}
    assert not found, "use the statistics floor (judgelab.stats) instead:\n" + "\n".join(
        f"  {f}: {'; '.join(o)}" for f, o in found.items())


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
