"""A notebook's run: opened once after its parameter cell, it writes everything the notebook shows.

::

    run = Run.open("09", profile=PROFILE, knobs=knobs)
    gw = run.use(open_gateway("narrative", ...))   # its judge names the outputs; its calls are counted
    run.banner()                                   # once: which judge answered (a warning for the 135M model)
    run.table(df, "narr_table02_correlations")     # CSV + provenance sidecar; returns df to show
    run.figure(fig, "narr_fig08_pvalues", "Fig. 8(l) p-values.")   # PNG/PDF, caption + judge line, shown

The run holds what the sidecars say (:mod:`judgelab.provenance`), in the object, not in module
state: notebook, profile, prompt versions, judge (of its gateways, or :meth:`Run.judge`), seeds.
"""
from __future__ import annotations

import atexit
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab import paths, profiles, provenance, reporting, settings_file


def _notebook_stem(number: str) -> str:
    """``"09"`` -> ``"09_judge_modes"``: the pipeline's name for the kernel it runs, else the file's."""
    env = settings_file.env(provenance.ENV_NOTEBOOK)
    if env and env.split("_")[0] == number.split("_")[0]:
        return env
    found = sorted((paths.project_root() / "notebooks").glob(f"{number}_*.py"))
    return found[0].stem if found else number


@dataclass
class Run:
    """What one notebook's outputs say about who made them (module docstring)."""

    notebook: str | None
    profile: str | None
    prompt_versions: list[str] = field(default_factory=list)
    seeds: dict[str, Any] = field(default_factory=dict)
    backend: str | None = None
    model: str | None = None
    base_url: str | None = None
    ledgers: list = field(default_factory=list)
    root: Path | None = None  # the output root it was opened in (its ledger goes there, even at exit)
    choices: dict[str, Any] = field(default_factory=dict)  # analysis choices the outputs rest on (choose)

    @classmethod
    def open(cls, notebook: str, *, profile: str, knobs: dict | None = None) -> "Run":
        """Notebook ``notebook``'s run (``"09"`` or its stem) in ``profile``, with ``knobs``' seeds."""
        env_prompts = [v for v in (settings_file.env(provenance.ENV_PROMPTS) or "").split(",") if v]
        run = cls(_notebook_stem(notebook), profiles.check(profile), env_prompts, root=paths.output_root())
        run.knobs(knobs or {})
        atexit.register(run.write_ledger)  # the calls made after the last output count too
        return run

    # -- who made the numbers
    def use(self, *gateways):
        """Count ``gateways``' calls in the ledger, the last one's judge names the outputs; returns the first."""
        for gw in gateways:
            if not any(lg is gw.ledger for lg in self.ledgers):
                self.ledgers.append(gw.ledger)
            self.judge(gw.backend_name, gw.model_name, getattr(gw, "base_url", None))
        return gateways[0]

    def judge(self, backend: str | None, model: str | None, base_url: str | None = None) -> None:
        """Name the judge whose numbers this notebook shows (read from rows another notebook wrote)."""
        if backend or model:
            self.backend, self.model, self.base_url = backend, model, base_url

    def knobs(self, knobs: dict[str, Any]) -> dict[str, Any]:
        """Note ``knobs``' seed knobs (``seed``, ``*_seed``) for the sidecars; return ``knobs``."""
        self.seeds.update({k: v for k, v in knobs.items() if k == "seed" or k.endswith("_seed")})
        return knobs

    def choose(self, choices: dict[str, Any]) -> dict[str, Any]:
        """Note the analysis ``choices`` the outputs rest on (JSD base, parameter set, date rule,
        ...): every later sidecar lists them as ``choices`` ("<name>=<value>"); return them."""
        self.choices.update(choices)
        return choices

    def context(self) -> dict[str, Any]:
        """The sidecar fields of an output written now (:func:`judgelab.provenance.context`), with
        the run's ``choices``."""
        ctx = provenance.context(notebook=self.notebook, profile=self.profile, backend=self.backend, model=self.model,
                                 base_url=self.base_url, prompt_versions=self.prompt_versions, seeds=self.seeds)
        return {**ctx, "choices": [f"{k}={v}" for k, v in sorted(self.choices.items())]}

    @property
    def caption_line(self) -> str:
        """Profile, judge and (for the embedded 135M model) its warning: the end of every caption."""
        return reporting.caption_line(self.profile, self.backend, self.model)

    def banner_text(self) -> str:
        judged = self.backend or self.model
        return reporting.model_banner(self.backend, self.model) if judged else "> No LLM judge behind these numbers."

    def banner(self) -> None:
        """Display the judge's banner (Markdown)."""
        from IPython.display import Markdown, display
        display(Markdown(self.banner_text()))

    # -- what the notebook writes
    def table(self, df, name: str, *, index: bool = False):
        """Write ``df`` as ``results/tables/<name>.csv`` with its sidecar; return ``df`` to show."""
        reporting.save_table(df, name, index=index, context=self.context())
        self.write_ledger()
        return df

    def figure(self, fig, name: str, caption: str = "", *, judged: bool = True, judge_line: str | None = None,
               show: bool = True) -> list[Path]:
        """Write ``fig`` under ``figures/`` with ``caption`` and the run's :attr:`caption_line` (the
        profile alone if ``judged=False``; ``judge_line`` for several judges); show it, or close it."""
        import matplotlib.pyplot as plt  # only figure-making notebooks need it
        line = judge_line or (self.caption_line if judged else reporting.caption_line(self.profile))
        outs = reporting.save_figure(fig, name, f"{caption} {line}" if caption else line, context=self.context())
        self.write_ledger()
        plt.show() if show else plt.close(fig)
        return outs

    def write_ledger(self) -> Path | None:
        """Sum the calls of this run's gateways into ``results/runs/ledgers/<notebook>.json``."""
        return provenance.write_ledger(self.notebook, self.ledgers, self.root)
