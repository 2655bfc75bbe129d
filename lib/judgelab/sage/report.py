"""What the SAGE notebooks 02–04 show, one call per thing shown.

Notebooks 02–04 differ only in their layer and their prose: their one code cell is
:func:`layer_notebook`, which shows the header and each of :meth:`LayerReport.sections` under its
heading. Each section saves its tables and figures through the run (names ``sage_<what>_<layer>``)
and returns a :class:`Shown` that Jupyter displays; the figures and numbers behind them are plain
functions below.
"""
from __future__ import annotations

import io
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from judgelab import exchange, interim, params, profiles, style
from judgelab.run import Run
from judgelab.sage import CATEGORIES, LAYERS, MODES
from judgelab.sage.protocol import prompts, runner

EVALUATOR_FINAL_ROUND = 5
KNOBS_SHOWN = ("per_category", "modes", "max_text_tokens", "context_policy", "mask_title_in_body",
               "anonymous_author_sensitivity", "anonymous_per_category", "max_tokens")
TOKEN_COLUMNS = ["n_calls", "input_tokens", "cached_tokens", "processed_tokens", "output_tokens", "latency_s"]


@dataclass
class Shown:
    """What one notebook cell shows: Markdown ``text``, a ``figure``, a ``table`` (each optional),
    displayed by Jupyter in that order."""

    text: str = ""
    figure: Any = None
    table: pd.DataFrame | None = None

    def _ipython_display_(self) -> None:
        from IPython.display import Image, Markdown, display

        if self.text:
            display(Markdown(self.text))
        if self.figure is not None:
            display(Image(data=png_bytes(self.figure)))
        if self.table is not None:
            display(self.table)


def png_bytes(fig, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (works whatever matplotlib backend is active, and after ``close``)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


# ---------------------------------------------------------------- what a layer report shows
# House style (judgelab.style); legends sit under the panels, never over the points.

def _modes(rows: pd.DataFrame) -> list[str]:
    return [m for m in MODES if m in set(rows["mode"])] or list(MODES)


def final_scores_figure(rows: pd.DataFrame, layer: str):
    """Strip plot of final evaluator scores (R5, status ok): one panel per mode, dimensions on
    the x axis, categories side by side."""
    codes = prompts.layer_spec(layer).codes
    fin = rows[(rows["track"] == "evaluator") & (rows["round"] == 5) & (rows["status"] == "ok")]
    modes = _modes(rows)
    fig, axes = style.subplots(len(modes), width=4.2, height=3.4, sharey=True)
    rng = np.random.default_rng(0)
    pos = {c: i for i, c in enumerate(codes)}
    for ax, mode in zip(axes[0], modes):
        sub = fin[fin["mode"] == mode]
        for j, cat in enumerate(CATEGORIES):
            pts = sub[sub["category"] == cat]
            x = np.array([pos[d] for d in pts["dimension"]], dtype=float) + (j - 1) * 0.22
            ax.scatter(x + rng.uniform(-0.05, 0.05, len(x)), pts["score"].to_numpy(float), s=22, alpha=0.8,
                       color=style.CATEGORY_COLOURS[cat], marker=style.CATEGORY_MARKERS[cat],
                       label=style.CATEGORY_LABELS[cat] if len(pts) else None)
        ax.set_xticks(range(len(codes)), codes)
        ax.set_xlim(-0.5, len(codes) - 0.5)  # every dimension's slot, whichever categories have points
        ax.set_ylim(0.8, 5.2)
        ax.set_title(f"{layer}, {mode} mode (final round)")
        ax.grid(axis="y")
        if sub.empty:
            style.empty_panel(ax, "no scored replies")
    axes[0][0].set_ylabel("score (1–5)")
    style.figure_legend(fig, axes[0], where="below", ncol=len(CATEGORIES))
    return fig


def trajectory_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean score per mode x dimension x step, steps R1–R5 then V-blind and V-review (ok rows)."""
    ok = rows[rows["status"] == "ok"].copy()
    ok["step"] = [f"R{r}" if t == "evaluator" else ("V-blind" if t == "validator_blind" else "V-review")
                  for t, r in zip(ok["track"], ok["round"])]
    return ok.groupby(["mode", "dimension", "step"], as_index=False).agg(
        mean_score=("score", "mean"), n=("score", "size"))


STEPS = ["R1", "R2", "R3", "R4", "R5", "V-blind", "V-review"]


def trajectory_figure(rows: pd.DataFrame, layer: str):
    """Round-by-round mean score per dimension (one panel per mode): evaluator rounds R1–R5 as
    lines, the validator's blind and review means as squares right of the dotted line."""
    tab = trajectory_table(rows)
    codes = prompts.layer_spec(layer).codes
    modes = _modes(rows)
    fig, axes = style.subplots(len(modes), width=4.2, height=3.4, sharey=True)
    for ax, mode in zip(axes[0], modes):
        for k, code in enumerate(codes):
            sub = tab[(tab["mode"] == mode) & (tab["dimension"] == code)].set_index("step").reindex(STEPS)
            y = sub["mean_score"].to_numpy(float)
            ax.plot(range(5), y[:5], marker="o", color=style.colour(k), label=code)
            ax.scatter([5.3, 6.3], y[5:], marker="s", s=18, color=style.colour(k))
        ax.axvline(4.65, color=style.GREY, lw=0.8, ls=":")
        ax.set_xticks([0, 1, 2, 3, 4, 5.3, 6.3], STEPS)
        ax.set_ylim(0.8, 5.2)
        ax.set_title(f"{layer}, {mode} mode: trajectory")
        ax.grid(axis="y")
    axes[0][0].set_ylabel("mean score")
    style.figure_legend(fig, axes[0], where="below", ncol=len(codes), title="dimension (squares: validator)")
    return fig


def failure_list(failures: pd.DataFrame) -> pd.DataFrame:
    """The failure list, shortest useful form (error text cut at 160 characters)."""
    out = failures.copy()
    out["error"] = out["error"].astype(str).str.slice(0, 160)
    return out.reset_index(drop=True)



def score_distribution(rows: pd.DataFrame) -> pd.DataFrame:
    """count, mean, std, min, max of the evaluator's final (Round-5) scores of replies that parsed,
    per mode x category x dimension (``std`` with ddof = 1, NaN for a single score)."""
    final = rows[(rows["track"] == "evaluator") & (rows["round"] == EVALUATOR_FINAL_ROUND) & (rows["status"] == "ok")]
    return final.groupby(["mode", "category", "dimension"])["score"].describe()[["count", "mean", "std", "min", "max"]]


def trajectory_pivot(trajectory: pd.DataFrame) -> pd.DataFrame:
    """:func:`trajectory_table` as one row per mode x dimension and one column per step (R1–R5,
    V-blind, V-review; steps without scores left out)."""
    wide = trajectory.pivot_table(index=["mode", "dimension"], columns="step", values="mean_score")
    return wide[[s for s in STEPS if s in set(trajectory["step"])]]


def r4_score_changes(rows: pd.DataFrame) -> tuple[int, int]:
    """(dimension scores the evaluator changed in Round 4, dimension scores it gave in Round 4).

    Round 4 checks evidence sufficiency: confidence may change, scores may not (paper,
    "Iterative Evaluator"); a changed score is kept and flagged (``r4_score_changed``)."""
    r4_ok = (rows["track"] == "evaluator") & (rows["round"] == 4) & (rows["status"] == "ok")
    return int(rows["r4_score_changed"].sum()), int(r4_ok.sum())


def truncated_evaluations(rows: pd.DataFrame, summary: pd.DataFrame) -> tuple[int, int]:
    """(evaluations whose story text was cut to fit the context, content-mode evaluations)."""
    cut = summary.merge(rows.groupby(["story_id", "mode"])["truncated"].any().reset_index())
    return int(cut["truncated"].sum()), int((cut["mode"] == "content").sum())


def token_means(accounting: pd.DataFrame) -> pd.DataFrame:
    """Mean per evaluation, by mode, of :func:`judgelab.sage.protocol.runner.token_accounting`'s
    calls, tokens (sent, prefix-cached, processed, generated) and latency, rounded to 0.1."""
    return accounting.groupby("mode")[TOKEN_COLUMNS].mean().round(1)


# ---------------------------------------------------------------- notebooks 02-04

@dataclass
class LayerReport:
    """One LLM-judged layer's run and everything notebooks 02–04 show about it (module docstring)."""

    layer: str
    run_of: Run
    gateway: Any
    corpus: pd.DataFrame
    settings: dict
    stories: Sequence[str] | str | None = None
    modes: Sequence[str] | str | None = None
    context_policy: str | None = None
    mask_title_in_body: bool | None = None
    anonymous_sensitivity: bool | None = None
    result: runner.SageRun | None = None
    anonymous: runner.SageRun | None = None
    wall_s: float = math.nan
    written: dict = field(default_factory=dict)

    @classmethod
    def open(cls, layer: str, run: Run, backend: str | None = None, model: str | None = None,
             base_url: str | None = None, *, stories=None, modes=None, context_policy: str | None = None,
             mask_title_in_body: bool | str | None = None, anonymous_author_sensitivity: bool | str | None = None,
             gateway=None, corpus: pd.DataFrame | None = None) -> "LayerReport":
        """Check the layer; open SAGE's gateway (None = environment, then the embedded default) for
        ``run`` unless ``gateway`` is given (then the caller's run uses it); read notebook 01's
        ``corpus`` unless given. ``MASK_TITLE_IN_BODY`` / ``ANONYMOUS_AUTHOR_SENSITIVITY``: None =
        the profile's knob, else a yes/no value (:func:`judgelab.params.as_bool`)."""
        if run.config is None:  # a resolved configuration was checked when it was resolved
            profiles.check(run.profile)
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}; choose one of {', '.join(LAYERS)}")
        if gateway is None:  # SAGE's judge (judgelab.study_models: the paper's gpt-5-mini on openai)
            from judgelab.study_models import open_gateway

            explicit = any(v is not None for v in (backend, model, base_url))
            gateway = run.use(open_gateway("sage", config=run.config) if run.config is not None and not explicit
                              else open_gateway("sage", backend=backend, model=model, base_url=base_url))
        corpus = interim.read("corpus") if corpus is None else corpus
        mask, anon = (None if params.is_unset(v) else params.as_bool(v, name=name) for v, name in (
            (mask_title_in_body, "MASK_TITLE_IN_BODY"), (anonymous_author_sensitivity, "ANONYMOUS_AUTHOR_SENSITIVITY")))
        return cls(layer, run, gateway, corpus, run.knobs(_configuration(run).knobs("sage")),
                   stories, modes, context_policy, mask, anon)

    def knobs(self) -> dict[str, Any]:
        """The profile's knobs that shape this run, with the notebook's overrides applied."""
        overrides = {"context_policy": self.context_policy, "mask_title_in_body": self.mask_title_in_body,
                     "anonymous_author_sensitivity": self.anonymous_sensitivity}
        return {k: self.settings[k] for k in KNOBS_SHOWN} | {k: v for k, v in overrides.items() if v is not None}

    def header(self) -> Shown:
        """The model banner and the knobs."""
        knobs = "; ".join(f"`{k}` = {v}" for k, v in self.knobs().items())
        return Shown(self.run_of.banner_text() + f"\n\nSAGE {self.layer}, profile `{self.run_of.profile}`: {knobs}")

    # -- the run
    def run(self) -> Shown:
        """Run every story x mode (:func:`judgelab.sage.protocol.runner.run_layer`), write
        ``sage_rows_<layer>`` and ``sage_summary_<layer>``; show the summary, the wall time and,
        when texts were cut to fit the context, how many."""
        t0 = time.perf_counter()
        self.result = runner.run_layer(self.gateway, self.corpus, self.layer, _configuration(self.run_of), stories=self.stories,
                                       modes=self.modes, context_policy=self.context_policy,
                                       mask_title_in_body=self.mask_title_in_body)
        self.wall_s = time.perf_counter() - t0
        self.written = runner.write_interim(self.result)
        rows, summary = self.result.rows, self.result.summary
        text = (f"{len(summary)} evaluations, {len(rows)} rows in {self.wall_s:.0f} s wall time; wrote "
                + ", ".join(f"`{name}`" for name in (f"sage_{k}_{self.layer}" for k in self.written)) + ".")
        n_cut, n_content = truncated_evaluations(rows, summary)
        if n_cut:
            text += (f"\n\n**Texts cut to fit the context:** {n_cut} of {n_content} content-mode evaluations kept "
                     f"only the head and the tail of the story (budget ~{self.settings['max_text_tokens']} tokens, "
                     f"`context_policy={self.knobs()['context_policy']}`). "
                     "Their scores judge an excerpt, not the whole story.")
        return Shown(text + "\n\n" + self._run_anonymous(), table=summary)

    def _run_anonymous(self) -> str:
        """Table 9's sensitivity run (title mode, "an unknown author" for every story), when the
        knob is on and this run has title mode; a stale file of an earlier run is removed when
        not, so notebook 05 never pairs it with these scores (its calls stay in the cache)."""
        name = runner.anonymous_rows_name(self.layer)
        on = runner.anonymous_sensitivity_on(self.knobs()["anonymous_author_sensitivity"], self.layer)
        if not on or "title" not in set(self.result.rows["mode"]):
            interim.path_of(name).unlink(missing_ok=True)
            why = "off" if not on else "on, but this run has no title mode"
            return f"**Anonymous-author sensitivity** ({why}): not run; Table 9 has no anonymous rows for {self.layer}."
        titled = set(self.result.rows.loc[self.result.rows["mode"] == "title", "story_id"])
        chosen = self.corpus[self.corpus["story_id"].isin(titled)]
        stories = sorted(runner.anonymous_stories(chosen, self.knobs().get("anonymous_per_category")))
        if not stories:  # an empty list would mean "the profile's draw" to the runner: run nothing instead
            interim.path_of(name).unlink(missing_ok=True)
            return (f"**Anonymous-author sensitivity** (on, but `anonymous_per_category` selects none of the run's "
                    f"{len(titled)} stories): not run; Table 9 has no anonymous rows for {self.layer}.")
        self.anonymous = runner.run_title_anonymous(self.gateway, self.corpus, self.layer, _configuration(self.run_of),
                                                    stories=stories)
        runner.write_anonymous_interim(self.anonymous)
        n = len(self.anonymous.summary)
        return (f"**Anonymous-author sensitivity:** title mode once more with \"an unknown author\" for every "
                f"story ({n} evaluations, {len(stories)} of the run's {len(titled)} stories; in the main run the LLM stories are \"by\" their "
                f"model, which names their category); wrote `{name}`, Table 9's sensitivity rows in notebook 05. "
                "`ANONYMOUS_AUTHOR_SENSITIVITY=False` skips it.")

    def _run(self) -> runner.SageRun:
        if self.result is None:
            raise RuntimeError(f"SAGE {self.layer}: call run() before showing its results")
        return self.result

    def disagreements(self) -> Shown:
        """Dimensions where the evaluator's R5 and the blind validator differ by more than the
        profile's ``agreement_threshold`` (paper, Table 12: flagged for review)."""
        threshold = self.settings["agreement_threshold"]
        flagged = runner.disagreements(self._run().rows, threshold)
        return Shown(f"Evaluator (R5) vs blind validator: {len(flagged)} dimension scores differ by more than "
                     f"{threshold} (flagged for review, paper Table 12)", table=flagged)

    def final_scores(self) -> Shown:
        """Figure ``sage_scores_<layer>`` and table ``sage_score_distribution_<layer>``."""
        rows = self._run().rows
        fig = final_scores_figure(rows, self.layer)
        self.run_of.figure(fig, f"sage_scores_{self.layer}", f"SAGE {self.layer}: final (R5) evaluator scores.",
                           show=False)
        dist = score_distribution(rows)
        self.run_of.table(dist.reset_index(), f"sage_score_distribution_{self.layer}")
        return Shown(figure=fig, table=dist)

    def trajectories(self) -> Shown:
        """Figure and table ``sage_trajectory_<layer>`` (mean score per round and validator step),
        and the Round-4 score changes."""
        rows = self._run().rows
        fig = trajectory_figure(rows, self.layer)
        self.run_of.figure(fig, f"sage_trajectory_{self.layer}", f"SAGE {self.layer}: mean score per round.",
                           show=False)
        traj = trajectory_table(rows)
        self.run_of.table(traj, f"sage_trajectory_{self.layer}")
        changed, given = r4_score_changes(rows)
        return Shown(f"R4 score changes (scores must not change in R4; kept and flagged): {changed} of {given} "
                     "dimension scores", figure=fig, table=trajectory_pivot(traj))

    def failures(self) -> Shown:
        """Table ``sage_failures_<layer>``: every failed or not-run reply with its error."""
        run = self._run()
        fails = failure_list(run.failures)
        self.run_of.table(fails, f"sage_failures_{self.layer}")
        n_failed = int((run.summary["status"] == "failed").sum())
        return Shown(f"**{len(fails)} failed or not-run replies** in {n_failed} of {len(run.summary)} evaluations.",
                     table=fails)

    def tokens(self) -> Shown:
        """Table ``sage_tokens_<layer>`` (:func:`runner.token_accounting`); shows the means by mode."""
        run = self._run()
        tok = runner.token_accounting(run.calls)
        # n_from_cache describes this run, not the evaluations: a replay would change the table;
        # the run record counts cache hits instead (judgelab.runrecord)
        self.run_of.table(tok.drop(columns="n_from_cache"), f"sage_tokens_{self.layer}")
        n_eval = len(run.summary)
        return Shown(f"Wall time {self.wall_s:.0f} s for {n_eval} evaluations "
                     f"({self.wall_s / max(n_eval, 1):.1f} s each). " + self.run_of.caption_line, table=token_means(tok))

    def sections(self) -> list[tuple[str, Any]]:
        """(heading, method) of what notebooks 02–04 show after the header, in order."""
        return [(f"## Run: every story x mode, evaluator (5 rounds) + validator (blind, review)\n\nWrites "
                 f"`results/interim/sage_rows_{self.layer}.parquet` (one row per story x mode x track x round x "
                 f"dimension) and `sage_summary_{self.layer}.parquet` (one row per evaluation) for notebooks 05 "
                 "and 06.", self.run),
                ("Evaluator (R5) against the blind validator: dimension scores that differ by more than 0.5 are "
                 "flagged for review (paper, Table 12).", self.disagreements),
                ("## Final scores by dimension, category and mode", self.final_scores),
                ("## Round-by-round trajectories (evaluator R1–R5, then the validator's blind and review "
                 "scores)", self.trajectories),
                ("## Failures (recorded, never scored)", self.failures),
                ("## Tokens per evaluation: stable prefix vs resending the story in every call", self.tokens),
                (f"## The judge at work\n\nOne SAGE {self.layer} evaluation of the main run (a story x mode): "
                 "the evaluator's rounds 1-5, then the validator's blind scoring and review, as sent and as "
                 "answered. Read from this run's cache and transcripts (`judgelab.exchange`; no call is "
                 "made); long texts are cut in the middle.", self.exchange)]

    def exchange(self) -> Shown:
        """One evaluation of the main run as the judge saw it (:func:`judgelab.exchange.load_exchange`)."""
        return Shown(exchange.exchange_markdown(exchange.load_exchange({"study": "sage", "layer": self.layer})))


def _configuration(run: Run):
    """The run's resolved configuration (a :class:`Run` made by hand without one: its profile's)."""
    from judgelab import config

    return config.of(run.config if run.config is not None else run.profile)


def layer_notebook(run: Run, layer: str, backend: str | None = None, model: str | None = None,
                   base_url: str | None = None, **options) -> LayerReport:
    """Everything notebooks 02–04 show (module docstring): open the :class:`LayerReport` (``options``
    as :meth:`LayerReport.open`), then display its header and each section under its heading."""
    from IPython.display import Markdown, display

    report = LayerReport.open(layer, run, backend, model, base_url, **options)
    display(report.header())
    for heading, show in report.sections():
        display(Markdown(heading))
        display(show())
    return report

