"""Each study's judge: the papers' own choice on OpenAI, overridable per study.

- ``sage`` (notebooks 02-04): gpt-5-mini at reasoning effort medium (the SAGE paper, "Implementation");
- ``narrative`` (09, 10): gpt-4.1, K agents at temperatures 0.3-0.7 (the Narrative paper, section 3.3);
- ``holistic`` (11, the appendix): gpt-4.1, the narrative paper's non-reasoning judge.

The model of a study, first that applies: the notebook's ``MODEL`` parameter;
``JUDGELAB_<STUDY>_MODEL``; ``JUDGELAB_MODEL``; on the ``openai`` backend the paper's judge above,
on the others the backend's own default (the embedded SmolLM2-135M for llamacpp, the server's
first model for openai-compatible).

Reasoning effort (reasoning models only, :mod:`judgelab.gateway.reasoning`):
``JUDGELAB_<STUDY>_REASONING_EFFORT``, else the request's own (the profile's), else the study's
default (SAGE: medium, the paper's), else the model's lowest.
"""
from __future__ import annotations

from dataclasses import dataclass

from judgelab.gateway.errors import ConfigError
from judgelab.gateway.reasoning import ReasoningPolicy, check_effort


@dataclass(frozen=True)
class PaperJudge:
    """A study's judge as its paper chose it."""

    study: str
    model: str
    reasoning_effort: str | None
    source: str


PAPER_JUDGES: dict[str, PaperJudge] = {
    "sage": PaperJudge("sage", "gpt-5-mini", "medium", "the SAGE paper, Implementation: GPT-5-mini, effort medium"),
    "narrative": PaperJudge("narrative", "gpt-4.1", None, "the Narrative paper, section 3.3: GPT-4.1"),
    "holistic": PaperJudge("holistic", "gpt-4.1", None, "appendix: the narrative paper's GPT-4.1"),
}
#: the study whose judge each LLM notebook uses
NOTEBOOK_STUDY = {"02": "sage", "03": "sage", "04": "sage", "09": "narrative", "10": "narrative", "11": "holistic",
                  # 12: SAGE's recognition and planted calls; its narrative planted calls go to the
                  # narrative judge (estimate.SPLIT_TRACKS), as notebook 12 sends them
                  "12": "sage"}
AGENT_DESIGNS = ("temperature", "seed-only")


@dataclass(frozen=True)
class Judge:
    """A study's judge: backend, model (None: the backend's default), reasoning, origin."""

    study: str
    backend: str
    model: str | None
    reasoning: ReasoningPolicy
    source: str


def _env(name: str, environ=None) -> str | None:
    from judgelab.gateway.settings import variable

    return variable(name, environ)


def check_study(study: str) -> PaperJudge:
    if study not in PAPER_JUDGES:
        raise ConfigError(f"unknown study {study!r}; choose one of {', '.join(PAPER_JUDGES)}")
    return PAPER_JUDGES[study]


def resolve_judge(study: str, backend: str | None = None, model: str | None = None,
                  base_url: str | None = None, environ=None) -> Judge:
    """The judge of ``study`` for these arguments and the environment (module docstring);
    ``environ``: another run's variables (None: this process's)."""
    from judgelab.gateway.settings import resolve

    paper = check_study(study)
    var = f"JUDGELAB_{study.upper()}_MODEL"
    chosen_backend = resolve(backend=backend, base_url=base_url, cache_path="/dev/null", progress=False,
                             environ=environ).backend
    for name, value in (("the notebook's MODEL", model), (var, _env(var, environ)),
                        ("JUDGELAB_MODEL", _env("JUDGELAB_MODEL", environ))):
        if value:
            picked, source = value, name
            break
    else:
        picked, source = (paper.model, paper.source) if chosen_backend == "openai" else (None, "the backend's default")
    effort_var = f"JUDGELAB_{study.upper()}_REASONING_EFFORT"
    policy = ReasoningPolicy(default=paper.reasoning_effort, override=check_effort(_env(effort_var, environ), effort_var))
    return Judge(study, chosen_backend, picked, policy, source)


def open_gateway(study: str, backend: str | None = None, model: str | None = None, base_url: str | None = None,
                 cache_mode: str | None = None, *, config=None, **kwargs):
    """:meth:`judgelab.gateway.Gateway.from_settings` on ``study``'s judge: as a run's resolved
    ``config`` (:class:`judgelab.config.Config`, the notebook's parameters applied) holds it, else
    :func:`resolve_judge` on these arguments and the environment. ``kwargs``: other gateway settings."""
    import dataclasses

    from judgelab.gateway import Gateway

    if config is not None:
        if any(v is not None for v in (backend, model, base_url, cache_mode)):
            raise TypeError("open_gateway: give the run's config or backend/model/base_url/cache_mode, not both "
                            "(the config already holds the notebook's parameters)")
        check_study(study)
        return Gateway.from_settings(dataclasses.replace(config.gateways[study], **kwargs))

    judge = resolve_judge(study, backend, model, base_url)
    return Gateway.from_settings(backend=backend, model=judge.model, base_url=base_url, cache_mode=cache_mode,
                                 reasoning=judge.reasoning, study=study, **kwargs)


def agent_design(value: str | None = None, environ=None) -> str:
    """How the narrative judges' K agents differ: ``temperature`` (the paper: spread over
    0.3-0.7, and seeds) or ``seed-only`` (no temperature sent, seeds only: the only design a
    model that rejects temperature can run). ``value``, else ``JUDGELAB_NARRATIVE_AGENTS``, else
    ``temperature``."""
    raw = (value or _env("JUDGELAB_NARRATIVE_AGENTS", environ) or "temperature").strip().lower().replace("_", "-")
    if raw not in AGENT_DESIGNS:
        raise ConfigError(f"JUDGELAB_NARRATIVE_AGENTS must be one of {', '.join(AGENT_DESIGNS)}, got {value or raw!r}")
    return raw
