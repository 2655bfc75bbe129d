"""A notebook's run: opened once after its parameter cell, it writes everything the notebook shows.

::

    run = Run.open("09", profile=PROFILE, params=globals())   # resolves run.config once
    gw = run.use(open_gateway("narrative", ...))   # its judge names the outputs; its calls are counted
    run.banner()                                   # once: which judge answered (a warning for the 135M model)
    run.table(df, "narr_table02_correlations")     # CSV + provenance sidecar; returns df to show
    run.table(df, "sage_recognition", study="sage")  # a notebook with two judges: that table's own
    run.figure(fig, "narr_fig08_pvalues", "Fig. 8(l) p-values.")   # PNG/PDF, caption + judge line, shown

The run holds what the sidecars say (:mod:`judgelab.provenance`), in the object, not in module
state: notebook, profile, the resolved configuration (:mod:`judgelab.config`: the notebook's
parameters applied, so the seeds recorded are the seeds used and a variant's parameters are
named), prompt versions (the pipeline's, or found from the notebook's imports when it is run by
hand), each study's judge (of its gateways, or :meth:`Run.judge`).
"""
from __future__ import annotations

import atexit
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab import config as _config
from judgelab import paths, profiles, provenance, reporting


def _prompt_versions(stem: str) -> list[str]:
    """The prompt versions the notebook's imports reach (:func:`judgelab.pipeline.prompt_versions`):
    what the pipeline passes its kernel, found here when the notebook is run by hand."""
    source = paths.project_root() / "notebooks" / f"{stem}.py"
    if not source.is_file():
        return []
    # imported by name: the pipeline reads a notebook's imports, so a plain import here would make
    # every notebook "reach" the pipeline's own files (and their prompt folders)
    pipeline = importlib.import_module("judgelab.pipeline")
    return pipeline.prompt_versions(source)


def _notebook_stem(number: str, kernel: str | None) -> str:
    """``"09"`` -> ``"09_judge_modes"``: the pipeline's name for the kernel it runs, else the file's."""
    if kernel and kernel.split("_")[0] == number.split("_")[0]:
        return kernel
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
    config: _config.Config | None = None  # the resolved configuration (judgelab.config), once per run
    judges: dict[str, tuple] = field(default_factory=dict)  # study -> (backend, model, base_url)

    @classmethod
    def open(cls, notebook: str, *, profile: str, knobs: dict | None = None, params: dict | None = None) -> "Run":
        """Notebook ``notebook``'s run (``"09"`` or its stem) in ``profile``: resolves its
        configuration once with ``params`` (the notebook's parameters: a dict, or ``globals()``,
        whose declared names are taken), notes ``knobs``' seeds and then the seeds the parameters set."""
        number = notebook.split("_")[0]
        cfg = _config.resolve(profiles.check(profile), number, _config.notebook_parameters(number, params or {}))
        stem = _notebook_stem(notebook, cfg.kernel["notebook"].value)
        prompts = cfg.kernel["prompt_versions"].value
        run = cls(stem, cfg.profile, list(prompts) if prompts is not None else _prompt_versions(stem),
                  root=paths.output_root(), config=cfg)
        run.knobs(knobs or {})
        atexit.register(run.write_ledger)  # the calls made after the last output count too
        return run

    # -- who made the numbers
    def use(self, *gateways):
        """Count ``gateways``' calls in the ledger; each names its study's outputs (the last one
        those written without a study); returns the first."""
        for gw in gateways:
            if not any(lg is gw.ledger for lg in self.ledgers):
                self.ledgers.append(gw.ledger)
            self.judge(gw.backend_name, gw.model_name, getattr(gw, "base_url", None), study=getattr(gw, "study", None))
        return gateways[0]

    def judge(self, backend: str | None, model: str | None, base_url: str | None = None, *,
              study: str | None = None) -> None:
        """Name the judge whose numbers this notebook shows (read from rows another notebook wrote);
        ``study``: the study whose tables it made (``run.table(..., study=...)``)."""
        if backend or model:
            self.backend, self.model, self.base_url = backend, model, base_url
            if study:
                self.judges[study] = (backend, model, base_url)

    def knobs(self, knobs: dict[str, Any]) -> dict[str, Any]:
        """Note ``knobs``' seed knobs (``seed``, ``*_seed``) for the sidecars, then those a notebook
        parameter set (the seed used, not the profile's); return ``knobs``."""
        self.seeds.update({k: v for k, v in knobs.items() if k == "seed" or k.endswith("_seed")})
        if self.config is not None:
            for key, s in self.config.settings.items():
                name = key.rsplit(".", 1)[-1]
                if s.source.startswith("parameter") and (name == "seed" or name.endswith("_seed")):
                    self.seeds[name] = s.value
        return knobs

    def choose(self, choices: dict[str, Any]) -> dict[str, Any]:
        """Note the analysis ``choices`` the outputs rest on (JSD base, parameter set, date rule,
        ...): every later sidecar lists them as ``choices`` ("<name>=<value>"); return them."""
        self.choices.update(choices)
        return choices

    def context(self, study: str | tuple[str, ...] | None = None) -> dict[str, Any]:
        """The sidecar fields of an output written now (:func:`judgelab.provenance.context`);
        ``study``: the study (or studies) whose judge made it, else every judge of the run is listed
        and the last one used is named (a KeyError for a study the run has no judge of)."""
        studies = (study,) if isinstance(study, str) else tuple(study or ())
        missing = [s for s in studies if s not in self.judges]
        if missing:
            raise KeyError(f"{self.notebook}: no judge of study {missing[0]!r} in this run "
                           f"(its judges: {', '.join(self.judges) or 'none'}); run.use its gateway first")
        backend, model, base_url = self.judges[studies[0]] if studies else (self.backend, self.model, self.base_url)
        judges = {s: self.judges[s] for s in (studies or self.judges)}
        changed = {k: v for k, v in (self.config.parameters if self.config else {}).items() if k != "PROFILE"}
        ctx = provenance.context(notebook=self.notebook, profile=self.profile, backend=backend, model=model,
                                 base_url=base_url, prompt_versions=self.prompt_versions, seeds=self.seeds,
                                 parameters=changed, judges={s: f"{b or '?'}:{m or '?'}" for s, (b, m, _) in judges.items()})
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
    def table(self, df, name: str, *, index: bool = False, study: str | tuple[str, ...] | None = None):
        """Write ``df`` as ``results/tables/<name>.csv`` with its sidecar (naming ``study``'s judge
        when given); return ``df`` to show."""
        reporting.save_table(df, name, index=index, context=self.context(study))
        self.write_ledger()
        return df

    def figure(self, fig, name: str, caption: str = "", *, judged: bool = True, judge_line: str | None = None,
               show: bool = True, study: str | tuple[str, ...] | None = None) -> list[Path]:
        """Write ``fig`` under ``figures/`` with ``caption`` and the run's :attr:`caption_line` (the
        profile alone if ``judged=False``; ``judge_line`` for several judges); show it, or close it."""
        import matplotlib.pyplot as plt  # only figure-making notebooks need it
        line = judge_line or (self.caption_line if judged else reporting.caption_line(self.profile))
        outs = reporting.save_figure(fig, name, f"{caption} {line}" if caption else line, context=self.context(study))
        self.write_ledger()
        plt.show() if show else plt.close(fig)
        return outs

    def write_ledger(self) -> Path | None:
        """Sum the calls of this run's gateways into ``results/runs/ledgers/<notebook>.json``."""
        return provenance.write_ledger(self.notebook, self.ledgers, self.root)
