"""Gateway configuration from arguments, then the environment, then the embedded default. Every
variable is declared in the settings file's ``[overrides]`` (``profiles.toml``,
``docs/settings.md``) and read with :func:`judgelab.settings_file.env`, here only: the gateway's
parts (progress bar, canary, redaction, llama.cpp threads) ask :func:`variable`.

Keys (:func:`api_key_for`): ``OPENAI_API_KEY`` goes only to OpenAI's own API (``api.openai.com`` or
a regional ``<region>.api.openai.com``, over https); any other base URL gets ``JUDGELAB_API_KEY`` or
no key (a local server needs none), never ``OPENAI_API_KEY``: to give a trusted proxy your OpenAI
key, set ``JUDGELAB_API_KEY`` to it. ``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID`` go only with it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from judgelab.gateway.cache import CACHE_MODES
from judgelab.gateway.errors import ConfigError
from judgelab.settings_file import env as _env
from judgelab.settings_file import env as _read

if TYPE_CHECKING:
    from judgelab.gateway.retry import RetryPolicy

BACKENDS = ("llamacpp", "openai", "openai-compatible")
_ALIASES = {
    "llama.cpp": "llamacpp", "llama_cpp": "llamacpp", "llama-cpp": "llamacpp", "embedded": "llamacpp",
    "openai_compatible": "openai-compatible", "compatible": "openai-compatible",
    "vllm": "openai-compatible", "ollama": "openai-compatible",
}
DEFAULT_CONCURRENCY = 8
DEFAULT_BATCH_POLL_S = 30.0
#: a demo story's prefix state is ~60 MB (SmolLM2-135M, ~2,600 tokens): room for ~16 stories,
#: more than the demo's six
DEFAULT_LLAMA_STATES_MB = 1024
#: what batch mode does with requests a batch left unanswered (JUDGELAB_BATCH_FALLBACK)
BATCH_FALLBACKS = ("stop", "live", "fail")
DEFAULT_BATCH_FALLBACK = "stop"
#: which part of the base URL the cache key holds (JUDGELAB_CACHE_ENDPOINT): ``host`` leaves the port
#: out (a local server started again on a free port serves the same model), ``url`` keeps it
CACHE_ENDPOINTS = ("host", "url")
DEFAULT_CACHE_ENDPOINT = "host"
#: the variables holding keys: OpenAI's own, and the one for every other endpoint
OPENAI_KEY_VAR, OTHER_KEY_VAR = "OPENAI_API_KEY", "JUDGELAB_API_KEY"
_YES, _NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Settings:
    """What :meth:`Gateway.from_settings` builds a gateway from, as :func:`resolve` chose it; the
    fields after ``batch_fallback`` come from arguments only."""

    backend: str
    model: str | None
    base_url: str | None
    cache_mode: str
    concurrency: int
    rpm: float | None
    tpm: float | None
    cache_path: Path
    progress: bool
    batch: bool = False
    batch_poll_s: float = DEFAULT_BATCH_POLL_S
    llama_states_mb: int = DEFAULT_LLAMA_STATES_MB
    batch_fallback: str = DEFAULT_BATCH_FALLBACK
    max_repairs: int = 2
    retry: RetryPolicy | None = None
    n_ctx: int | None = None
    timeout_s: float = 120.0
    schema_style: str | None = None
    price_table: str | Path | None = None
    transcripts: bool = True
    # a gateway.reasoning.ReasoningPolicy, not named: reasoning reads the backends, which read these settings
    reasoning: Any = None
    study: str | None = None  # whose judge (judgelab.study_models), named in stop messages
    canary: bool | None = None
    stop_after: int | None = None
    cache_endpoint: str = DEFAULT_CACHE_ENDPOINT

    @property
    def llama_states_dir(self) -> Path | None:
        """Where the llamacpp backend keeps shared prompt prefixes (None: keeps none)."""
        return self.cache_path.parent / "llama_states" if self.llama_states_mb > 0 else None


def _number(name: str, value, kind=int):
    if value is None:
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name} must be a number, got {value!r}") from exc
    if number <= 0:
        raise ConfigError(f"{name} must be positive, got {value!r}")
    return number


def _flag(name: str, value) -> bool:
    """A yes/no setting: True/False, or 1/0, true/false, yes/no, on/off (case-insensitive)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    raise ConfigError(f"{name} must be 1 or 0 (yes/no), got {value!r}")


def is_openai_url(url: str | None) -> bool:
    """True for OpenAI's own API over https (``api.openai.com`` or ``<region>.api.openai.com``)."""
    if not url:
        return False
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    return parts.scheme == "https" and (host == "api.openai.com" or host.endswith(".api.openai.com"))


def api_key_for(base_url: str | None, environ=None) -> tuple[str | None, str]:
    """(key or None, the variable it is read from) for calls to ``base_url`` (None: OpenAI's);
    a third-party server never receives the OpenAI key. ``environ``: another run's variables."""
    var = OPENAI_KEY_VAR if base_url is None or is_openai_url(base_url) else OTHER_KEY_VAR
    return _env(var, environ), var


def sends_account_headers(base_url: str | None, key_var: str) -> bool:
    """True when ``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID`` (an OpenAI account) may go with a call:
    only with ``OPENAI_API_KEY`` to OpenAI's own API."""
    return key_var == OPENAI_KEY_VAR and (base_url is None or is_openai_url(base_url))


def openai_client(api_key: str, base_url: str | None, key_var: str, **kwargs):
    """The official client for ``base_url``, with the organisation and project headers only where
    :func:`sends_account_headers` allows (the client would send them to any host)."""
    import openai

    client = openai.OpenAI(api_key=api_key, base_url=base_url, **kwargs)
    if not sends_account_headers(base_url, key_var):
        # read by the client's default_headers on every request: None leaves both headers out
        client.organization = None
        client.project = None
    return client


def endpoint_identity(base_url: str | None, part: str = DEFAULT_CACHE_ENDPOINT) -> str | None:
    """The part of ``base_url`` the cache key holds (:data:`CACHE_ENDPOINTS`): ``host``, the URL
    without its port (``http://127.0.0.1:8123/v1`` -> ``http://127.0.0.1/v1``; a URL without a port,
    such as OpenAI's, is unchanged); ``url``, all of it."""
    if part not in CACHE_ENDPOINTS:
        raise ConfigError(f"JUDGELAB_CACHE_ENDPOINT must be one of {', '.join(CACHE_ENDPOINTS)}, got {part!r}")
    if not base_url or part == "url":
        return base_url
    parts = urlsplit(base_url)
    if parts.port is None:
        return base_url
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}" if userinfo else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


ENV_PROGRESS = "JUDGELAB_PROGRESS"
_SHOW, _HIDE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def progress_setting(value: str | None = None) -> tuple[bool, str | None]:
    """(shown, ``"live"``/``"final"``/None for the default way) of ``JUDGELAB_PROGRESS`` (or
    ``value``): one reader for the gateway's settings and the bar
    (:mod:`judgelab.gateway.progress`), so every documented value works in both and any other is
    an error."""
    text = ((_env(ENV_PROGRESS) or "") if value is None else str(value)).strip().lower()
    if text in ("live", "final"):
        return True, text
    if not text or text in _SHOW:
        return True, None
    if text in _HIDE:
        return False, None
    raise ValueError(f"{ENV_PROGRESS}={text!r}: expected 1 or 0 (yes/no, on/off), or 'live' or 'final'")


def default_cache_path(environ=None) -> Path:
    """The response cache's file: ``JUDGELAB_CACHE_PATH``, else ``results/cache/llm_cache.sqlite``
    under the output root."""
    env_path = _env("JUDGELAB_CACHE_PATH", environ)
    if env_path:
        return Path(env_path)
    from judgelab import paths

    return paths.cache_dir() / "llm_cache.sqlite"


def variable(name: str, environ=None) -> str | None:
    """A declared gateway variable (``[overrides]``) as this process (or ``environ``) sets it: the
    gateway's parts (progress bar, canary, redaction, llama.cpp threads) read the environment
    through this module only."""
    return _env(name, environ)


def resolve_batch_fallback(value: str | None = None, environ=None) -> str:
    """The batch fallback: the argument, else ``JUDGELAB_BATCH_FALLBACK``, else ``stop``."""
    choice = (value or _env("JUDGELAB_BATCH_FALLBACK", environ) or DEFAULT_BATCH_FALLBACK).strip().lower()
    if choice not in BATCH_FALLBACKS:
        raise ConfigError(f"JUDGELAB_BATCH_FALLBACK must be one of {', '.join(BATCH_FALLBACKS)}, got {choice!r}")
    return choice


def normalize_backend(name: str) -> str:
    name = name.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    return name


def resolve(
    backend: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    cache_mode: str | None = None,
    concurrency: int | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    cache_path: str | Path | None = None,
    progress: bool | None = None,
    batch: bool | None = None,
    batch_poll_s: float | None = None,
    batch_fallback: str | None = None,
    environ=None,
    **options,
) -> Settings:
    """Arguments win over the environment; with neither, the embedded llamacpp model. ``options``:
    the :class:`Settings` fields read from arguments only. The base URL: the argument, else
    ``JUDGELAB_BASE_URL`` (either chooses ``openai-compatible`` when no backend is named), else for
    the OpenAI-protocol backends ``OPENAI_BASE_URL``. ``environ``: the variables of another run
    (a panel member's; None: this process's)."""
    def _env(name: str) -> str | None:
        return _read(name, environ)

    base_url = base_url or _env("JUDGELAB_BASE_URL")
    backend = backend or _env("JUDGELAB_BACKEND") or ("openai-compatible" if base_url else "llamacpp")
    backend = normalize_backend(backend)
    if backend != "llamacpp":
        base_url = base_url or _env("OPENAI_BASE_URL")
    mode = (cache_mode or _env("JUDGELAB_CACHE_MODE") or "normal").lower()
    if mode not in CACHE_MODES:
        raise ConfigError(f"unknown cache mode {mode!r}; choose one of {', '.join(CACHE_MODES)}")
    if cache_path is None:
        cache_path = default_cache_path(environ)
    if progress is not None:
        show = progress
    else:
        try:
            show = progress_setting()[0]
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    return Settings(
        backend=backend,
        model=model or _env("JUDGELAB_MODEL"),
        base_url=base_url if backend != "llamacpp" else None,
        cache_mode=mode,
        concurrency=_number("concurrency", concurrency or _env("JUDGELAB_CONCURRENCY")) or DEFAULT_CONCURRENCY,
        rpm=_number("rpm", rpm or _env("JUDGELAB_RPM"), float),
        tpm=_number("tpm", tpm or _env("JUDGELAB_TPM"), float),
        cache_path=Path(cache_path),
        progress=show,
        batch=_flag("JUDGELAB_BATCH", batch if batch is not None else (_env("JUDGELAB_BATCH") or "0")),
        batch_poll_s=_number("JUDGELAB_BATCH_POLL_S", batch_poll_s or _env("JUDGELAB_BATCH_POLL_S"), float)
        or DEFAULT_BATCH_POLL_S,
        llama_states_mb=_states_mb(_env("JUDGELAB_LLAMA_STATES_MB")),
        batch_fallback=resolve_batch_fallback(batch_fallback, environ),
        **({"cache_endpoint": (_env("JUDGELAB_CACHE_ENDPOINT") or DEFAULT_CACHE_ENDPOINT).strip().lower()}
           if "cache_endpoint" not in options else {}),
        **options,
    )


def _states_mb(value: str | None) -> int:
    if value is None:
        return DEFAULT_LLAMA_STATES_MB
    try:
        mb = int(value)
    except ValueError as exc:
        raise ConfigError(f"JUDGELAB_LLAMA_STATES_MB must be a whole number of megabytes (0 keeps none), got {value!r}") from exc
    if mb < 0:
        raise ConfigError(f"JUDGELAB_LLAMA_STATES_MB must be 0 or more, got {mb}")
    return mb
