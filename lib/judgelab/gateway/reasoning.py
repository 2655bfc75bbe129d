"""The sampling a request is sent with: reasoning models' budgets and effort, in one place.

OpenAI's reasoning models (gpt-5 family, o-series) spend hidden reasoning tokens out of
``max_completion_tokens`` before the visible reply, and reject ``temperature``/``top_p``: a budget
sized for the reply alone comes back empty, cut, and billed. So on backend ``openai`` (an
OpenAI-compatible server gets the request as designed) they are sent :func:`sent_sampling`:

* ``reasoning_effort``: the study's override (``JUDGELAB_<STUDY>_REASONING_EFFORT``), else the
  request's, else the study's default, else the model's lowest (:func:`lowest_effort`), never the
  API's silent default (medium);
* ``max_tokens``: the reply's budget plus :data:`REASONING_ALLOWANCE` for that effort;
* ``temperature``/``top_p``: None (not sent, so tables record what the model really used).

The cache key, the call, the transcript and :attr:`ChatResult.sampling` all see the result, so a
changed effort or allowance is a new cache entry.
"""
from __future__ import annotations

from dataclasses import dataclass

from judgelab.gateway.backends.openai_backend import is_reasoning_model
from judgelab.gateway.errors import ConfigError
from judgelab.gateway.types import Sampling

EFFORTS = ("minimal", "low", "medium", "high")
#: Output tokens added to a reasoning model's budget for its hidden reasoning, by effort. OpenAI
#: documents no per-effort figure; it recommends reserving "at least 25,000 tokens for reasoning
#: and outputs" when starting with these models. A cap costs nothing until used (only tokens
#: generated are billed), so the allowance errs on the high side: medium takes the documented
#: 25,000, the others scale from it. ``judgelab.estimate`` prices the typical spend separately.
REASONING_ALLOWANCE = {"minimal": 2_000, "low": 8_000, "medium": 25_000, "high": 50_000}


def reasoning_applies(backend: str, model: str) -> bool:
    """True when the gateway sends ``model`` the reasoning form (OpenAI's own API only)."""
    return backend == "openai" and is_reasoning_model(model or "")


def lowest_effort(model: str) -> str:
    """The lowest ``reasoning_effort`` the model accepts: ``minimal`` (gpt-5), else ``low``."""
    return "minimal" if (model or "").lower().split("/")[-1].startswith("gpt-5") else "low"


def check_effort(value: str | None, name: str = "reasoning_effort") -> str | None:
    """``value`` lower-cased, or None; a clear error for anything but minimal/low/medium/high."""
    if value is None or not str(value).strip():
        return None
    effort = str(value).strip().lower()
    if effort not in EFFORTS:
        raise ConfigError(f"{name} must be one of {', '.join(EFFORTS)}, got {value!r}")
    return effort


@dataclass(frozen=True)
class ReasoningPolicy:
    """Which effort a reasoning model gets: ``override``, else the request's, else ``default``, else
    the model's lowest."""

    default: str | None = None
    override: str | None = None

    def __post_init__(self):
        check_effort(self.default, "default reasoning effort")
        check_effort(self.override, "reasoning effort override")

    def effort(self, sampling: Sampling, model: str) -> str:
        return self.override or sampling.reasoning_effort or self.default or lowest_effort(model)


def sent_sampling(sampling: Sampling, backend: str, model: str, policy: ReasoningPolicy | None = None) -> Sampling:
    """The sampling the gateway sends ``model`` on ``backend`` for a request designed with ``sampling``."""
    if not reasoning_applies(backend, model):
        return sampling
    effort = (policy or ReasoningPolicy()).effort(sampling, model)
    return sampling.model_copy(update={
        "temperature": None, "top_p": None, "reasoning_effort": effort,
        "max_tokens": sampling.max_tokens + REASONING_ALLOWANCE[effort],
    })

