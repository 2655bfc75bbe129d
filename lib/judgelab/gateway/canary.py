"""A paid fan-out never buys nothing: a canary per request shape, and a stop on repeated failures.

Inside :meth:`Gateway.run_batch` and :meth:`Gateway.map` (live and batch mode) a :class:`FanOutGuard`
watches every call:

* **canary**: the first cache miss of every request *shape* (:func:`shape_key`) goes alone while
  the others of that shape wait; however it fails (rejected, empty, cut, invalid after its repairs,
  a 5xx or timeout after its retries) the fan-out stops with :class:`FanOutStopped` naming the
  cause, URL, model and the setting to change: the requests behind it would buy the same. Only a
  failure of the item itself (:data:`NOT_STREAKED`) lets the shape pass; a cache hit counts as a
  passed canary, and a cut or empty canary gets no repair turn (the same budget buys the same cut);
* **streak**: ``JUDGELAB_STOP_AFTER`` consecutive fresh calls failing alike (:func:`failure_key`)
  stop the fan-out with one error instead of one failure row per item; a success resets it. A
  failed reply that would get a repair turn counts too (:meth:`FanOutGuard.count_failed_reply`),
  and no call starts once the stop is reached, so a shape that turns bad after its canary pays
  at most ``stop_after + concurrency - 1`` failed replies (11 at the defaults 4 and 8), where
  counting only results let 64 items at concurrency 8 pay 34.

On by default for the OpenAI-protocol backends; the embedded model (free, a pipeline check with
small budgets) runs without unless ``JUDGELAB_CANARY=1``; ``JUDGELAB_CANARY=0`` switches both off.
"""
from __future__ import annotations

import re
import threading
from typing import Any, Callable

from judgelab.gateway.backends.openai_backend import is_reasoning_model
from judgelab.gateway.settings import variable  # the gateway reads the environment there only
from judgelab.gateway.errors import ConfigError, GatewayError
from judgelab.gateway.reasoning import REASONING_ALLOWANCE, reasoning_applies
from judgelab.gateway.redact import redact
from judgelab.gateway.types import ChatRequest, ChatResult

DEFAULT_STOP_AFTER = 4
#: failure classes of the item, never of the endpoint or the model: no streak, no canary stop
NOT_STREAKED = ("context_overflow", "repeats_key", None)
_HTTP = re.compile(r"\bHTTP (\d{3})\b")


class FanOutStopped(GatewayError):
    """A fan-out stopped before paying for more: a canary failed, or items kept failing alike."""


def shape_key(request: ChatRequest, model: str) -> tuple:
    """What a provider may reject alike: model, schema, the caller's ``shape`` tag, the token
    budget, and which sampling parameters are sent. Not their values: K agents that differ only in
    temperature or seed are one shape with one canary, not K canaries paid at once."""
    schema = request.schema.__name__ if request.schema is not None else None
    sampling = request.sampling
    sent = tuple(sorted(name for name, value in sampling.model_dump(exclude={"max_tokens"}).items()
                        if value is not None))
    return (model, schema, request.tags.get("shape"), sampling.max_tokens, sent)


#: failure classes that may not repeat (the server's passing trouble, a sampled reply cut or
#: empty once): a stop on one of them is continued by running the same command again
TRANSIENT = ("timeout", "connection", "dropped", "unreadable", "cut", "empty")
RERUN = "Completed calls are cached: once the cause has passed, run the same command again to continue from the cache."


def transient(failure: str) -> bool:
    """True when a stop for ``failure`` may pass by itself (:data:`TRANSIENT`, HTTP 429 and 5xx)."""
    return failure in TRANSIENT or failure == "http_429" or (failure.startswith("http_5") and failure[5:].isdigit())


def canary_stops(failure: str | None) -> bool:
    """True when a canary that failed this way stops its fan-out (all but :data:`NOT_STREAKED`)."""
    return failure not in NOT_STREAKED


def classify_exception(exc: BaseException) -> str:
    """The failure class of a backend exception: ``http_4xx``/``http_<status>``, timeout,
    connection, context_overflow, or the exception's class name."""
    from judgelab.gateway.errors import ContextOverflowError

    if isinstance(exc, ContextOverflowError):
        return "context_overflow"
    status = getattr(exc, "status", None)
    if status is None:
        m = _HTTP.search(str(exc))
        status = int(m.group(1)) if m else None
    if status is not None:
        return "http_4xx" if 400 <= int(status) < 500 and int(status) != 429 else f"http_{int(status)}"
    if getattr(exc, "timed_out", False):
        return "timeout"
    if getattr(exc, "connection_failed", False):
        return "connection"
    if getattr(exc, "kind", None) in ("dropped", "unreadable"):  # a reply lost in transit
        return exc.kind
    return type(exc).__name__


def classify_reply(text: str | None, finish_reason: str | None) -> str:
    """The failure class of a reply that did not validate: empty, cut (finish_reason length), invalid."""
    if finish_reason == "length":
        return "empty" if not (text or "").strip() else "cut"
    return "empty" if not (text or "").strip() else "invalid"


def failure_key(result: ChatResult) -> str | None:
    """What the streak's "failed the same way" compares: the failure class (None for a success)."""
    if result.ok:
        return None
    return result.failure or "unknown"


def canary_enabled(backend: str, value: Any = None) -> bool:
    """Whether the guard runs: ``value`` (True/False), else ``JUDGELAB_CANARY``, else on for every
    backend but the embedded llamacpp one."""
    from judgelab.gateway.settings import _flag

    if value is None:
        value = variable("JUDGELAB_CANARY")
    return _flag("JUDGELAB_CANARY", value) if value is not None else backend != "llamacpp"


def stop_after_setting(value: int | None = None) -> int:
    """Consecutive alike failures that stop a fan-out: ``value``, else ``JUDGELAB_STOP_AFTER``, else 4."""
    raw = value if value is not None else variable("JUDGELAB_STOP_AFTER") or DEFAULT_STOP_AFTER
    try:
        n = int(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"JUDGELAB_STOP_AFTER must be a whole number of calls (>= 1), got {raw!r}") from exc
    if n < 1:
        raise ConfigError(f"JUDGELAB_STOP_AFTER must be at least 1, got {n}")
    return n


class _Canary:
    def __init__(self):
        self.done = threading.Event()
        self.error: str | None = None


class FanOutGuard:
    """One fan-out's canaries and failure streak (module docstring). Thread-safe. ``passed``: the
    gateway's shapes already answered (shared across fan-outs); ``describe`` words a stop."""

    def __init__(self, passed: set, stop_after: int, describe: Callable[[str, ChatResult, ChatRequest, int], str]):
        self.passed = passed
        self.stop_after = stop_after
        self.describe = describe
        self._lock = threading.Lock()
        self._pending: dict[tuple, _Canary] = {}
        self._streak: tuple[str | None, int] = (None, 0)
        self.stopped: str | None = None

    def check(self) -> None:
        """Raise the stop, if any: no further call once the fan-out has stopped."""
        if self.stopped is not None:
            raise FanOutStopped(self.stopped)

    def hit(self, shape: tuple) -> None:
        """A cache hit: the shape has been answered before, it needs no canary."""
        with self._lock:
            self.passed.add(shape)

    def call(self, shape: tuple, request: ChatRequest, canary: Callable[[], ChatResult],
             ordinary: Callable[[], ChatResult]) -> ChatResult:
        """``canary()`` for the shape's first miss, else ``ordinary()`` once the shape's canary has
        passed; :class:`FanOutStopped` when it failed as :func:`canary_stops` says."""
        self.check()
        with self._lock:
            first = shape not in self.passed and shape not in self._pending
            gate = self._pending.setdefault(shape, _Canary()) if shape not in self.passed else None
        if gate is None:
            return ordinary()
        if not first:
            gate.done.wait()  # the canary's thread always settles it (finally below)
            if gate.error is not None:
                raise FanOutStopped(gate.error)
            self.check()
            return ordinary()
        result = None
        try:
            result = canary()
        except BaseException as exc:
            gate.error = f"the canary request of its shape did not finish ({type(exc).__name__}: {exc})"
            raise
        finally:
            if result is not None and not result.ok and canary_stops(result.failure):
                gate.error = self.describe("canary", result, request, 1)
                self.stopped = gate.error
            with self._lock:
                if gate.error is None:
                    self.passed.add(shape)
                self._pending.pop(shape, None)
            gate.done.set()
        if gate.error is not None:
            raise FanOutStopped(gate.error)
        return result

    def count_failed_reply(self, failure: str) -> bool:
        """A paid reply that failed as ``failure`` and would get a repair turn: it counts toward
        the streak like a failed result; False (no repair turn) once the fan-out has stopped or
        this reply brings the streak to ``stop_after`` (its result, recorded next, raises the stop)."""
        with self._lock:
            if self.stopped is not None:
                return False
            last, n = self._streak
            n = n + 1 if last == failure else 1
            self._streak = (failure, n)
            return n + 1 < self.stop_after  # the result of this reply is the next count

    def record(self, result: ChatResult, request: ChatRequest) -> None:
        """Count a fresh result toward the streak; raise when it reaches ``stop_after``."""
        if result.cached:
            return
        key = failure_key(result)
        with self._lock:
            if key is None or key in NOT_STREAKED:
                self._streak = (None, 0) if key is None else self._streak
                return
            last, n = self._streak
            n = n + 1 if last == key else 1
            self._streak = (key, n)
            if n >= self.stop_after and self.stopped is None:
                self.stopped = self.describe("streak", result, request, n)
        if self.stopped is not None and n >= self.stop_after:
            raise FanOutStopped(self.stopped)


class StopWording:
    """Words a fan-out's stop (:class:`FanOutGuard`'s ``describe``): what failed, where, and the
    setting that would change the outcome, with the key redacted."""

    def __init__(self, backend, study: str | None = None, secrets: tuple[str, ...] = ()):
        self.backend = backend
        self.study = study
        self.secrets = tuple(secrets)

    def __call__(self, why: str, result: ChatResult, request: ChatRequest, n: int) -> str:
        """Why the fan-out stopped and which setting to change (``why``: canary | streak)."""
        sent = request.sampling
        head = (f"stopped after {'the canary call of this request shape' if why == 'canary' else f'{n} consecutive calls that failed alike'}"
                f" ({result.failure}) at {self.backend.base_url or self.backend.name}, model {self.backend.model}, "
                f"[{request.item_label()}]: {result.error}")
        rerun = f" {RERUN}" if result.failure is not None and transient(result.failure) else ""
        return redact(f"{head}. {self.remedy(result.failure, result.finish_reason, sent)}.{rerun}", self.secrets)

    def remedy(self, failure: str | None, finish_reason: str | None, sent) -> str:
        """The settings that would change the outcome of a ``failure``."""
        study = (self.study or "").upper()
        model_var = f"JUDGELAB_{study}_MODEL" if study else "JUDGELAB_MODEL"
        effort_var = f"JUDGELAB_{study}_REASONING_EFFORT" if study else "the request's reasoning_effort"
        reasoning = reasoning_applies(self.backend.name, self.backend.model)
        if failure == "empty" and finish_reason != "length":
            return f"The model answered nothing within its budget: choose another model ({model_var})"
        if failure in ("empty", "cut"):
            if reasoning:
                allowance = REASONING_ALLOWANCE.get(sent.reasoning_effort, 0)
                return (f"The reply did not fit max_completion_tokens={sent.max_tokens} (the profile's "
                        f"max_tokens {sent.max_tokens - allowance} + a reasoning allowance of {allowance} for "
                        f"reasoning_effort={sent.reasoning_effort}): raise the profile's max_tokens, lower "
                        f"{effort_var} (minimal), or choose a non-reasoning model ({model_var}=gpt-4.1)")
            return (f"The reply did not fit max_tokens={sent.max_tokens}: raise the profile's max_tokens for "
                    f"this request, or choose another model ({model_var})")
        if failure == "invalid":
            return (f"The model's replies break the reply schema, repair turns included: choose another model "
                    f"({model_var}), or check the study's schema and prompt version (a cap the reply must fit is "
                    "stated in the schema's descriptions)")
        if failure == "http_4xx":
            key_var = getattr(self.backend, "key_var", None) or "no key"
            hint = ""
            if self.backend.name == "openai-compatible" and is_reasoning_model(self.backend.model or ""):
                hint = (f"; {self.backend.model} is a reasoning model, sent here as designed (temperature, "
                        "max_tokens): if this URL serves OpenAI's models, choose JUDGELAB_BACKEND=openai, which "
                        "sends it reasoning_effort and max_completion_tokens")
            return (f"The server rejects the request: check the model name and key ({model_var}, "
                    f"{key_var}, the variable whose key was sent to this host) or the setting the server's "
                    f"message names{hint}")
        return (f"Every further item would fail the same way: fix the endpoint ({self.backend.base_url}) or the model "
                f"({model_var}); JUDGELAB_STOP_AFTER sets how many alike failures stop a run")


class Canary:
    """One gateway's canary and streak: whether they run (``enabled``), the streak's
    ``stop_after``, the request shapes answered so far (shared by its fan-outs), and the wording of
    a stop (:class:`StopWording`)."""

    def __init__(self, enabled: bool, stop_after: int, wording: "StopWording"):
        self.enabled = enabled
        self.stop_after = stop_after
        self.wording = wording
        self.passed: set = set()

    def guard(self) -> FanOutGuard | None:
        """A fresh guard for one fan-out (None when switched off)."""
        return FanOutGuard(self.passed, self.stop_after, self.wording) if self.enabled else None

    def first_requests(self, requests: list[ChatRequest], model: str,
                       answered: Callable[[ChatRequest], bool]) -> list[ChatRequest]:
        """The first request of every shape not answered before and not ``answered`` now (a cache
        hit, or held by a recorded batch: such a shape counts as passed)."""
        out, seen = [], set(self.passed)
        for req in requests:
            shape = shape_key(req, model)
            if shape in seen:
                continue
            if answered(req):
                self.passed.add(shape)
            else:
                out.append(req)
            seen.add(shape)
        return out
