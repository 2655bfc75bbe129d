"""Every figure function draws its data: panels, titles, labels and the number (and values) of the
plotted points, bars and lines equal the input's, so a figure function that draws nothing fails.
Each figure is also saved with a long caption and must have no colliding text and the caption under
everything (``figures/<name>.layout.json``, written by ``reporting.save_figure``).

Inputs are small hand-built frames in the columns each function reads, so every count is known.
"""
from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402

from judgelab import reporting, style  # noqa: E402

CAPTION = ("A long caption that has to wrap over several lines under the figure, as the notebooks' "
           "captions do when they carry the run's provenance: profile=smoke; judge=llamacpp:"
           "SmolLM2-135M-Instruct. " + reporting.SMALL_MODEL_WARNING)


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


def saved_cleanly(fig, name: str, root) -> dict:
    """Save ``fig`` with :data:`CAPTION`; assert no text collides and the caption is lowest; close it."""
    reporting.save_figure(fig, name, caption=CAPTION)
    layout = json.loads((root / "figures" / f"{name}.layout.json").read_text())
    plt.close(fig)
    assert layout["overlaps"] == [], f"{name}: colliding text {layout['overlaps']}"
    assert layout["above_caption"] == [], f"{name}: reaches below the caption: {layout['above_caption']}"
    assert "caption" in [t["name"] for t in layout["texts"]]
    return layout


def data_axes(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def bars(ax) -> list[float]:
    """Heights of every bar drawn by ax.bar, in drawing order."""
    return [p.get_height() for c in ax.containers if isinstance(c, BarContainer) for p in c.patches]


def errorbar_points(ax) -> list[np.ndarray]:
    """(x, y) of each ax.errorbar call's data line."""
    return [c.lines[0].get_xydata() for c in ax.containers if isinstance(c, ErrorbarContainer)
            and c.lines[0] is not None]


def legend_labels(fig) -> list[str]:
    legs = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [t.get_text() for leg in legs for t in leg.get_texts()]


# ----------------------------------------------------------------------------- SAGE Figures 2-4

def _trajectories():
    rows = []
    for li, layer in enumerate(("L4", "L5", "L6")):
        for ci, cat in enumerate(("canonical", "pulp", "llm")):
            for r in range(1, 6):
                rows.append({"layer": layer, "category": cat, "round": r, "mean": 1.5 + li + 0.1 * ci + 0.01 * r,
                             "sem": 0.1, "n": 4 + ci})
    return pd.DataFrame(rows)


def test_sage_fig02_one_line_per_category_with_every_round(out_root):
    from judgelab.sage.analysis import paper_figures

    traj = _trajectories()
    fig = paper_figures.plot_round_trajectories(traj)
    axes = data_axes(fig)
    assert [ax.get_title() for ax in axes] == ["L4 Cultural", "L5 Emotional", "L6 Existential"]
    assert [ax.get_xlabel() for ax in axes] == ["round"] * 3
    for ax, layer in zip(axes, ("L4", "L5", "L6")):
        lines = errorbar_points(ax)
        assert len(lines) == 3
        for xy, cat in zip(lines, ("canonical", "pulp", "llm")):
            want = traj[(traj["layer"] == layer) & (traj["category"] == cat)].sort_values("round")
            assert xy[:, 0].tolist() == [1, 2, 3, 4, 5]
            assert np.allclose(xy[:, 1], want["mean"])
        assert ax.get_legend() is None  # the legend is under the panels, not over the lines
    assert legend_labels(fig) == ["Canonical (n=4)", "Pulp (n=5)", "LLM-generated (n=6)"]
    saved_cleanly(fig, "sage_fig02", out_root)


def test_sage_fig02_says_which_layer_has_no_rows(out_root):
    from judgelab.sage.analysis import paper_figures

    traj = _trajectories()
    fig = paper_figures.plot_round_trajectories(traj[traj["layer"] != "L5"])
    assert [t.get_text() for t in fig.axes[1].texts] == ["no evaluator rows for L5"]
    assert errorbar_points(fig.axes[1]) == []
    saved_cleanly(fig, "sage_fig02_gap", out_root)


def test_sage_fig03_bar_heights_are_the_means(out_root):
    from judgelab.sage.analysis import paper_figures

    desc = pd.DataFrame([{"layer": l, "category": c, "mean": 2.0 + 0.5 * i + 0.1 * j, "sd": 0.3, "n": 6}
                         for i, l in enumerate(("L4", "L5", "L6")) for j, c in enumerate(("canonical", "pulp", "llm"))])
    paper = {l: {"canonical": 4.0, "pulp": 3.5, "llm": 2.5} for l in ("L4", "L5", "L6")}
    fig = paper_figures.plot_genre_means(desc, paper)
    ax = fig.axes[0]
    want = [desc.set_index(["layer", "category"]).loc[(l, c), "mean"]
            for c in ("canonical", "pulp", "llm") for l in ("L4", "L5", "L6")]
    assert np.allclose(bars(ax), want)
    diamonds = [ln for ln in ax.lines if ln.get_marker() == "D"]
    assert len(diamonds) == 3 and np.allclose(np.concatenate([d.get_ydata() for d in diamonds]),
                                              [4.0] * 3 + [3.5] * 3 + [2.5] * 3)
    assert sorted(legend_labels(fig)) == ["Canonical", "LLM-generated", "Pulp", "paper (Table 11)"]
    layout = saved_cleanly(fig, "sage_fig03", out_root)
    legend = dict((t["name"], t["bbox"]) for t in layout["texts"])["axes 0 legend"]
    caption = dict((t["name"], t["bbox"]) for t in layout["texts"])["caption"]
    assert legend[1] > caption[3]  # the legend sits above the caption (the reported bug)


def test_sage_fig04_bars_are_both_d_conventions(out_root):
    from judgelab.sage.analysis import paper_figures

    pw = pd.DataFrame({"group_a": "canonical", "group_b": "llm", "layer": ["L4", "L5", "L6"],
                       "d_pooled_sd": [1.0, 2.0, 3.0], "d_sqrt_mean_var": [1.1, 2.1, 3.1]})
    fig = paper_figures.plot_effect_sizes(pw, {"L4": 2.7, "L5": 1.7, "L6": 2.4})
    ax = fig.axes[0]
    assert np.allclose(bars(ax), [1.0, 2.0, 3.0, 1.1, 2.1, 3.1])
    assert [ln.get_ydata()[0] for ln in ax.lines if ln.get_linestyle() == "--"] == [0.8]
    saved_cleanly(fig, "sage_fig04", out_root)


# ----------------------------------------------------------------------------- SAGE per-layer figures

def _layer_rows():
    from judgelab.sage.protocol import prompts

    codes = prompts.layer_spec("L4").codes
    rows = []
    for mode in ("content", "title"):
        for s, cat in enumerate(("canonical", "canonical", "pulp", "llm")):
            for k, code in enumerate(codes):
                for r in range(1, 6):
                    rows.append({"story_id": f"s{s}", "category": cat, "mode": mode, "track": "evaluator",
                                 "round": r, "dimension": code, "score": 1.0 + k + 0.1 * r * (mode == "title"),
                                 "status": "ok"})
                for track, delta in (("validator_blind", 0.5), ("validator_review", 0.25)):
                    rows.append({"story_id": f"s{s}", "category": cat, "mode": mode, "track": track, "round": 1,
                                 "dimension": code, "score": 1.0 + k + delta, "status": "ok"})
    rows[0]["status"], rows[0]["score"] = "failed", np.nan  # s0/content/first code/R1
    return pd.DataFrame(rows), codes


def test_layer_final_scores_one_point_per_final_evaluation(out_root):
    from judgelab.sage import report

    rows, codes = _layer_rows()
    fig = report.final_scores_figure(rows, "L4")
    axes = data_axes(fig)
    assert [ax.get_title() for ax in axes] == ["L4, content mode (final round)", "L4, title mode (final round)"]
    for ax, mode in zip(axes, ("content", "title")):
        want = rows[(rows["mode"] == mode) & (rows["track"] == "evaluator") & (rows["round"] == 5)]
        pts = np.concatenate([c.get_offsets() for c in ax.collections])
        assert len(pts) == len(want) == 4 * len(codes)
        assert sorted(pts[:, 1]) == pytest.approx(sorted(want["score"]))
        assert [t.get_text() for t in ax.get_xticklabels()] == list(codes)
    assert legend_labels(fig) == ["Canonical", "Pulp", "LLM-generated"]
    saved_cleanly(fig, "sage_scores_L4", out_root)


def test_layer_trajectory_lines_are_round_means(out_root):
    from judgelab.sage import report

    rows, codes = _layer_rows()
    fig = report.trajectory_figure(rows, "L4")
    for ax, mode in zip(data_axes(fig), ("content", "title")):
        lines = [ln for ln in ax.lines if ln.get_label() in codes]
        assert [ln.get_label() for ln in lines] == list(codes)
        for k, ln in enumerate(lines):
            want = [1.0 + k + 0.1 * r * (mode == "title") for r in range(1, 6)]
            assert np.allclose(ln.get_ydata(), want)
        validator = np.concatenate([c.get_offsets() for c in ax.collections])
        assert len(validator) == 2 * len(codes)
    assert legend_labels(fig) == list(codes)
    saved_cleanly(fig, "sage_trajectory_L4", out_root)


def test_emotional_arcs_one_line_per_story(out_root):
    from judgelab.sage.analysis import independence

    t = np.linspace(0, 1, 20)
    arcs = pd.concat([pd.DataFrame({"story_id": sid, "title": title, "category": cat, "t": t,
                                    "sentiment": np.sin(t * k)})
                      for k, (sid, title, cat) in enumerate([("a", "The Long and Winding Story Title Here", "canonical"),
                                                             ("b", "Second", "canonical"), ("c", "Pulp One", "pulp")])])
    fig = independence.plot_emotional_arcs(arcs)
    axes = data_axes(fig)
    assert [ax.get_title() for ax in axes] == ["Canonical", "Pulp"]
    story_lines = [[ln for ln in ax.lines if not ln.get_label().startswith("_")] for ax in axes]
    assert [len(s) for s in story_lines] == [2, 1]
    assert np.allclose(story_lines[1][0].get_ydata(), np.sin(t * 2))
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["The Long and Winding Story Title Here"[:34],
                                                                          "Second"]
    saved_cleanly(fig, "sage_fig_emotional_arcs", out_root)


# ----------------------------------------------------------------------------- appendix

def test_judge_vs_human_points_and_intervals(out_root):
    from judgelab.human import figures

    stories = [f"st{i}" for i in range(5)]
    tidy = pd.DataFrame([{"dataset": "confederacy", "story": s, "source": "x", "criterion": "overall",
                          "rater": r, "value": float(i + r)} for i, s in enumerate(stories) for r in range(2)])
    scores = pd.DataFrame({"dataset": "confederacy", "story": stories, "measure": "holistic",
                           "score": [1.0, 2.0, 3.0, 4.0, np.nan]})
    table = pd.DataFrame({"dataset": "confederacy", "measure": "holistic", "criterion": ["overall", "dim_x"],
                          "n": [4, 2], "spearman": [0.8, np.nan], "spearman_lo": [0.5, np.nan],
                          "spearman_hi": [1.0, np.nan], "ceiling_spearman": [0.6, np.nan]})
    fig = figures.plot_judge_vs_human(table, scores, tidy, title="judge vs people")
    ax1, ax2 = fig.axes
    pts = ax1.collections[0].get_offsets()
    assert len(pts) == 5 and np.allclose(np.asarray(pts[:4]), [[1, 0.5], [2, 1.5], [3, 2.5], [4, 3.5]])
    assert len(errorbar_points(ax2)) == 1 and errorbar_points(ax2)[0][0, 0] == pytest.approx(0.8)
    assert [t.get_text() for t in ax2.texts] == ["no correlation (n=2)"]
    assert [t.get_text() for t in ax2.get_yticklabels()] == ["confederacy: holistic ~ overall",
                                                              "confederacy: holistic ~ dim_x"]
    assert legend_labels(fig)[0] == "confederacy (overall, n=4)"
    saved_cleanly(fig, "sage_fig_judge_vs_human", out_root)


# ----------------------------------------------------------------------------- narrative Figure 8

def _judged():
    rng = np.random.default_rng(1)
    rows = []
    for coll in ("news", "vispub"):
        for pid in range(5):
            for method in ("maxcap", "random"):
                mc, mean, length = rng.uniform(0.2, 0.8), rng.uniform(0.3, 0.9), int(rng.integers(3, 9))
                for m, mode in enumerate(("simple", "cot", "standard")):
                    rows.append({"collection": coll, "pair_id": pid, "method": method, "mode": mode,
                                 "min_coherence": mc, "mean_coherence": mean, "length": length,
                                 "score_mean": 2 + 6 * mc + m, "score_sd": 0.5})
    return pd.DataFrame(rows)


def test_fig08_judge_vs_coherence_one_point_per_narrative(out_root):
    from judgelab.narrative.judges import figures as jf

    judged = _judged()
    fig = jf.judge_vs_coherence(judged)
    axes = data_axes(fig)
    assert [ax.get_title() for ax in axes] == ["news: LLM simple", "vispub: LLM simple", "news: LLM CoT", "vispub: LLM CoT"]
    for ax, (mode, coll) in zip(axes, [("simple", "news"), ("simple", "vispub"), ("cot", "news"), ("cot", "vispub")]):
        pts = np.concatenate(errorbar_points(ax))
        want = judged[(judged["collection"] == coll) & (judged["mode"] == mode)]
        assert len(pts) == len(want) == 10
        assert sorted(pts[:, 1]) == pytest.approx(sorted(want["score_mean"]))
    assert legend_labels(fig) == ["max capacity", "random chronological"]
    saved_cleanly(fig, "narr_fig08_judge_vs_coherence", out_root)


def test_fig08_scores_by_mode_one_box_per_mode_and_method(out_root):
    from judgelab.narrative.judges import figures as jf

    fig = jf.scores_by_mode(_judged())
    for ax in data_axes(fig):
        assert len(ax.patches) == 3 * 2  # modes x methods
        assert [t.get_text() for t in ax.get_xticklabels()] == ["simple", "cot", "standard"]
    assert legend_labels(fig) == ["max capacity", "random chronological"]
    saved_cleanly(fig, "narr_fig08_scores_by_mode", out_root)


def test_fig08_mean_scores_by_method_bars_are_means(out_root):
    from judgelab.narrative.judges import figures as jf

    judged = _judged()
    fig = jf.mean_scores_by_method(judged)
    ax = data_axes(fig)[0]
    g = judged[judged["collection"] == "news"].groupby(["method", "mode"])["score_mean"].mean()
    want = [g[(m, mode)] for m in ("maxcap", "random") for mode in ("simple", "cot", "standard")]
    assert np.allclose(bars(ax), want)
    saved_cleanly(fig, "narr_fig08_mean_scores_by_method", out_root)


def test_fig08_agent_agreement_and_effects_and_pvalues(out_root):
    from judgelab.narrative.judges import figures as jf

    dis = pd.DataFrame({"collection": ["news"] * 2 + ["vispub"] * 2, "mode": ["simple", "cot"] * 2,
                        "mean_sd": [0.1, 0.2, 0.3, 0.4], "mean_cov": [0.01, 0.02, 0.03, 0.04]})
    fig = jf.agent_agreement(dis)
    assert np.allclose(bars(data_axes(fig)[1]), [0.3, 0.4, 0.03, 0.04])
    saved_cleanly(fig, "narr_fig08_agent_agreement", out_root)

    effects = pd.DataFrame({"collection": "news", "metric": ["min coherence", "LLM simple", "LLM CoT"],
                            "kind": ["math", "llm", "llm"], "d": [2.5, 0.4, 9.0],
                            "t_p": [1e-5, 0.2, 0.0], "mw_p": [1e-4, 0.3, 1e-9]})
    fig = jf.effect_sizes(effects)
    assert np.allclose(bars(fig.axes[0]), [2.5, 0.4, 9.0])
    assert sorted(ln.get_ydata()[0] for ln in fig.axes[0].lines) == [0.2, 0.5, 0.8]
    saved_cleanly(fig, "narr_fig08_effect_sizes", out_root)

    fig = jf.p_values(effects)
    assert np.allclose(bars(fig.axes[0]), [1e-5, 0.2, 1e-300, 1e-4, 0.3, 1e-9])
    saved_cleanly(fig, "narr_fig08_pvalues", out_root)


def test_fig08_correlation_heatmap_annotates_every_cell(out_root):
    from judgelab.narrative.judges import figures as jf
    from judgelab.narrative.judges.validity import correlation_matrix

    judged = _judged()
    fig = jf.correlation_heatmap(judged)
    axes = data_axes(fig)
    assert [ax.get_title() for ax in axes] == ["news", "vispub"]
    corr = correlation_matrix(judged, "news")
    assert len(axes[0].texts) == corr.size
    assert sorted(float(t.get_text()) for t in axes[0].texts) == pytest.approx(sorted(corr.to_numpy().ravel()), abs=0.005)
    saved_cleanly(fig, "narr_fig08_correlation_heatmap", out_root)


# ----------------------------------------------------------------------------- narrative Figure 9, OOD

def _followup_long():
    j = _judged()
    j["temporal_span"], j["span_unit"] = j["length"] * 2.0, "years"
    j["complexity_score"] = j["length"] - j["length"].mean()
    return j[j["collection"] == "vispub"]


def test_fig09_panels_draw_every_row(out_root):
    from judgelab.narrative.analyses import figures as af

    t6 = pd.DataFrame({"collection": "vispub", "model": ["linear", "linear", "ridge", "ridge"],
                       "mode": ["simple", "cot"] * 2, "r2_mean": [0.1, 0.2, 0.3, 0.4], "r2_sd": 0.05})
    fig = af.predictive_r2(t6)
    assert np.allclose(bars(fig.axes[0]), [0.1, 0.2, 0.3, 0.4])
    saved_cleanly(fig, "narr_fig09_a_predictive", out_root)

    t8 = pd.DataFrame({"collection": "vispub", "mode": ["simple", "cot"], "mean_sd": [0.2, 0.3],
                       "paper_mean_sd": [0.25, 0.35]})
    fig = af.disagreement_by_mode(t8)
    assert np.allclose(bars(fig.axes[0]), [0.2, 0.3])
    saved_cleanly(fig, "narr_fig09_b_disagreement", out_root)

    long = _followup_long()
    std = long[long["mode"] == "standard"]
    fig = af.temporal_scatter(long)
    pts = data_axes(fig)[0].collections[0].get_offsets()
    assert len(pts) == len(std) == 10 and np.allclose(np.asarray(pts)[:, 1], std["min_coherence"])
    assert any(ax.get_label() == "<colorbar>" for ax in fig.axes)
    saved_cleanly(fig, "narr_fig09_c_temporal", out_root)

    fig = af.complexity_hexbin(long)
    counts = data_axes(fig)[0].collections[0].get_array()
    assert counts.sum() == len(std)  # every narrative lands in a hexagon
    saved_cleanly(fig, "narr_fig09_d_complexity", out_root)

    errors = pd.DataFrame({"collection": "vispub", "mode": ["simple"] * 6 + ["cot"] * 4,
                           "error": np.linspace(-0.5, 0.5, 10)})
    fig = af.error_histogram(errors)
    ax = fig.axes[0]
    heights = [sum(p.get_height() for p in c.patches) for c in ax.containers if isinstance(c, BarContainer)]
    assert heights == [6, 4]
    saved_cleanly(fig, "narr_fig09_e_errors", out_root)

    summary = pd.DataFrame({"collection": "vispub", "method": ["maxcap", "maxcap", "random", "random"],
                            "mode": ["simple", "cot"] * 2, "min_coherence": [0.6, 0.6, 0.3, 0.3],
                            "score_scaled": [0.7, 0.8, 0.4, 0.5]})
    fig = af.method_comparison(summary)
    assert np.allclose(bars(fig.axes[0]), [0.6, 0.7, 0.8, 0.3, 0.4, 0.5])
    saved_cleanly(fig, "narr_fig09_f_methods", out_root)


def test_ood_scores_one_point_per_narrative_and_mode(out_root):
    from judgelab.narrative.analyses import figures as af

    long = pd.DataFrame({"kind": ["in-distribution"] * 4 + ["ood"] * 2, "mode": ["simple", "cot"] * 3,
                         "score_mean": [5.0, 6.0, 4.0, 3.0, 2.0, 1.0], "min_coherence": [0.5, 0.5, 0.4, 0.4, 0.1, 0.1]})
    fig = af.ood_scores(long, ["in-distribution", "ood", "perturbed"])
    for ax, col in zip(data_axes(fig), ("score_mean", "min_coherence")):
        pts = np.concatenate([c.get_offsets() for c in ax.collections])
        assert len(pts) == 6 and sorted(pts[:, 1]) == pytest.approx(sorted(long[col]))
        assert [t.get_text() for t in ax.get_xticklabels()] == ["in-distribution", "ood"]
    saved_cleanly(fig, "narr_ood_scores", out_root)
