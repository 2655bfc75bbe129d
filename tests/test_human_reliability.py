"""Human inter-rater reliability on published known-answer examples."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from judgelab.human import reliability as rel

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86(2), Table 2: 6 targets x 4 judges; Table 4 reports
# ICC(1,1) = .17 and ICC(1,4) = .44.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers x
# 12 units with missing values; alpha nominal = 0.743, ordinal = 0.815, interval = 0.849, ratio = 0.797.
NA = np.nan
KRIPP = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
])


def tidy_from_matrix(m: np.ndarray, criterion: str = "c", dataset: str = "d", raters=None) -> pd.DataFrame:
    """Targets x raters matrix -> tidy table (NaN cells left out)."""
    raters = raters or [f"r{j}" for j in range(m.shape[1])]
    rows = [(dataset, f"s{i:02d}", "src", criterion, raters[j], float(m[i, j]))
            for i, j in itertools.product(range(m.shape[0]), range(m.shape[1])) if not np.isnan(m[i, j])]
    return pd.DataFrame(rows, columns=["dataset", "story", "source", "criterion", "rater", "value"])


def oneway_icc(m: np.ndarray) -> tuple[float, float]:
    """ICC(1) and ICC(1,k) from the one-way ANOVA mean squares (Shrout & Fleiss 1979, case 1)."""
    n, k = m.shape
    grand = m.mean()
    msb = k * ((m.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msw = ((m - m.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (k - 1))
    return (msb - msw) / (msb + (k - 1) * msw), (msb - msw) / msb


def test_icc_matches_shrout_fleiss_published_values():
    res = rel.icc_oneway(tidy_from_matrix(SHROUT_FLEISS), "c")
    assert res["k"] == 4 and res["n_stories"] == 6
    assert res["icc1"] == pytest.approx(0.17, abs=0.005)
    assert res["icc1k"] == pytest.approx(0.44, abs=0.005)
    icc1, icc1k = oneway_icc(SHROUT_FLEISS)
    assert res["icc1"] == pytest.approx(icc1, rel=1e-9)
    assert res["icc1k"] == pytest.approx(icc1k, rel=1e-9)
    assert res["icc1_lo"] < res["icc1"] < res["icc1_hi"]


def test_icc_nested_design_does_not_depend_on_who_is_who():
    """Each story rated by its own pair of raters (as in Confederacy): ICC(1) uses slots only."""
    rng = np.random.default_rng(3)
    quality = rng.normal(5, 2, size=20)
    m = quality[:, None] + rng.normal(0, 1, size=(20, 2))
    nested = pd.concat([
        tidy_from_matrix(m[i:i + 1], raters=[f"g{i // 5}_a", f"g{i // 5}_b"]).assign(story=f"s{i:02d}")
        for i in range(20)
    ], ignore_index=True)
    swapped = nested.copy()
    swapped["rater"] = swapped["rater"].map(lambda r: r[:-1] + ("b" if r.endswith("a") else "a"))
    a, b = rel.icc_oneway(nested, "c"), rel.icc_oneway(swapped, "c")
    assert a["icc1"] == pytest.approx(b["icc1"]) == pytest.approx(oneway_icc(m)[0])


@pytest.mark.parametrize("level, expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_alpha_matches_krippendorff_published_values(level, expected):
    tidy = tidy_from_matrix(KRIPP.T)  # units x observers
    res = rel.alpha(tidy, "c", level)
    assert res["alpha"] == pytest.approx(expected, abs=0.0005) and res["note"] == ""


def test_leave_one_rater_out_known_answers():
    m = np.array([[1, 2], [2, 1], [3, 5], [4, 3], [5, 4]], float)
    loo = rel.leave_one_rater_out(tidy_from_matrix(m), "c")
    from scipy.stats import spearmanr

    assert loo["n"].tolist() == [5, 5]
    assert loo["corr"].tolist() == pytest.approx([spearmanr(m[:, 0], m[:, 1]).statistic] * 2)
    same = np.repeat(np.arange(1.0, 7.0)[:, None], 3, axis=1)
    assert rel.leave_one_rater_out(tidy_from_matrix(same), "c", "kendall")["corr"].tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_add_overall_mean_and_sum():
    t = pd.concat([tidy_from_matrix(np.array([[1.0, 3.0]]), criterion="a"),
                   tidy_from_matrix(np.array([[0.0, 1.0]]), criterion="b")], ignore_index=True)
    mean = rel.add_overall(t, "overall", "mean").query("criterion == 'overall'").set_index("rater")["value"]
    total = rel.add_overall(t, "passed", "sum").query("criterion == 'passed'").set_index("rater")["value"]
    assert mean.to_dict() == {"r0": 0.5, "r1": 2.0} and total.to_dict() == {"r0": 1.0, "r1": 4.0}
    with pytest.raises(ValueError, match="rated story s00 on 1 of 2 criteria"):
        rel.add_overall(t.iloc[:-1])


def test_reliability_table_columns_and_values():
    t = tidy_from_matrix(SHROUT_FLEISS)
    tab = rel.reliability_table(t, level="interval")
    row = tab.iloc[0]
    assert row["n_raters"] == 4 and row["n_ratings"] == 24 and row["k"] == 4
    assert row["icc1"] == pytest.approx(oneway_icc(SHROUT_FLEISS)[0])
    assert row["alpha"] == pytest.approx(rel.alpha(t, "c", "interval")["alpha"])
    assert row["note"] == ""
    loo = rel.leave_one_rater_out(t, "c")["corr"]
    assert row["loo_spearman_mean"] == pytest.approx(loo.mean())


def test_duplicate_rating_is_an_error():
    t = tidy_from_matrix(SHROUT_FLEISS)
    with pytest.raises(ValueError, match="rated story s00 on c more than once"):
        rel.reliability_table(pd.concat([t, t.iloc[:1]]))


def test_degenerate_panels_give_nan_with_a_note_not_an_error():
    """Constant ratings, one rater, too few stories, an empty criterion: NaN and the shared rule's note."""
    const = tidy_from_matrix(np.full((5, 2), 3.0))
    row = rel.reliability_table(const).iloc[0]
    assert np.isnan(row["icc1"]) and np.isnan(row["alpha"]) and np.isnan(row["loo_spearman_mean"])
    assert row["note"] == "ICC: constant ratings; alpha: constant ratings"
    one_rater = tidy_from_matrix(SHROUT_FLEISS[:, :1])
    row = rel.reliability_table(one_rater).iloc[0]
    assert np.isnan(row["icc1"]) and row["note"] == "ICC: one rater; alpha: one rater"
    two_stories = tidy_from_matrix(SHROUT_FLEISS[:2])
    assert rel.reliability_table(two_stories).iloc[0]["note"] == "ICC: 2 items < 3; alpha: 2 items < 3"
    empty = rel.icc_oneway(tidy_from_matrix(SHROUT_FLEISS), "no-such-criterion")
    assert empty["k"] == 0 and np.isnan(empty["icc1"]) and empty["note"] == "empty table"
    assert rel.alpha(tidy_from_matrix(SHROUT_FLEISS), "no-such-criterion")["note"] == "empty table"
    loo = rel.leave_one_rater_out(tidy_from_matrix(SHROUT_FLEISS[:2]), "c")
    assert loo["corr"].isna().all() and (loo["note"] == "2 pairs < 3").all()
