"""One run's resolved configuration: the profile, the declared environment variables and the
notebook's parameters, resolved once into one frozen object, each value with its source.

::

    cfg = config.resolve("demo", notebook="05", params={"CONVERGENCE_THRESHOLD": 0.2})
    cfg["sage.convergence_threshold"]          # 0.2
    cfg.setting("sage.convergence_threshold")  # Setting(value=0.2, source='parameter CONVERGENCE_THRESHOLD')
    cfg.knobs("sage")                          # the study's knobs as a plain dict, overrides applied
    cfg.judges["sage"].model                   # Setting(value='gpt-5-mini', source='the SAGE paper ...') on openai

Precedence, first that applies: a notebook parameter (declared in the settings file's
``[parameters]`` with the knob it sets; None there means "the profile's"), a declared environment
variable (``[overrides]``), the profile (with ``inherits``), the code's default. The environment is
read once, here, through :func:`judgelab.settings_file.environment`; pass ``environ`` to resolve
another run's settings (a panel member's) without touching the process's environment.

``python -m judgelab.profiles show PROFILE`` prints :meth:`Config.show`. Keys are never read:
a judge's :attr:`StudyJudge.key_variable` names the variable its key would come from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from judgelab import params as _params
from judgelab import settings_file

DEFAULT = "default"


@dataclass(frozen=True)
class Setting:
    """One resolved value and where it came from."""

    value: Any
    """The value the run uses (the settings file's ``"none"`` read as None, arrays as tuples)."""
    source: str
    """``profile demo``, ``environment JUDGELAB_MODEL``, ``parameter SEED``, ``paper ...`` or ``default``."""


@dataclass(frozen=True)
class StudyJudge:
    """One study's judge as this run will call it (:mod:`judgelab.study_models`)."""

    study: str
    """``sage``, ``narrative`` or ``holistic``."""
    backend: Setting
    """``llamacpp``, ``openai`` or ``openai-compatible``."""
    model: Setting
    """The model (None: the backend's default, e.g. the embedded SmolLM2-135M for llamacpp)."""
    base_url: Setting
    """The endpoint of an OpenAI-protocol backend (None: OpenAI's own, or in process)."""
    reasoning_effort: Setting
    """The effort override for reasoning models (None: the request's, then the study's default)."""
    key_variable: str | None
    """The environment variable the key is read from when a call is made (never the key itself);
    None for the in-process backend."""


def fmt(value: Any) -> str:
    """A value as the settings file and ``profiles show`` write it (None as ``none``)."""
    if value is None:
        return settings_file.NONE
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}={fmt(v)}" for k, v in value.items())
    return str(value)


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Config:
    """Everything one run uses, resolved once (module docstring). Frozen: change a value by
    resolving again with other parameters, a profile or an environment."""

    profile: str
    """The profile (a section of ``profiles.toml``)."""
    description: str
    """The profile's description line."""
    notebook: str | None
    """The notebook this configuration is for (``"05"``), None outside a notebook."""
    settings: Mapping[str, Setting] = field(default_factory=dict)
    """Every study knob, ``"study.knob"`` -> :class:`Setting` (a collection's knob:
    ``narrative.collections.news.n_pairs``)."""
    judges: Mapping[str, StudyJudge] = field(default_factory=dict)
    """Each study's judge."""
    gateway: Mapping[str, Setting] = field(default_factory=dict)
    """The gateway's settings (backend, cache mode and path, concurrency, limits, batch, canary ...)."""
    paths: Mapping[str, Setting] = field(default_factory=dict)
    """Output root, project root, acquired data, the data mirror."""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    """The notebook parameters given a value (every parameter but ``PROFILE`` defaults to None in its
    notebook, "the profile's"): what a variant run changed, as the sidecars name them."""
    embeddings: Mapping[str, Setting] = field(default_factory=dict)
    """The embedding models' endpoint: ``base_url`` of an OpenAI-protocol embedding server (None:
    OpenAI's own), what :class:`judgelab.embeddings.OpenAIEmbeddings` is given."""
    kernel: Mapping[str, Setting] = field(default_factory=dict)
    """What ``python -m judgelab.pipeline run`` tells a notebook's kernel: ``notebook`` (its stem)
    and ``prompt_versions`` (a tuple); None when the notebook is run by hand."""
    gateways: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Each study's :class:`judgelab.gateway.settings.Settings` (its judge, reasoning policy, cache,
    limits, canary), what :func:`judgelab.study_models.open_gateway` builds the study's gateway from."""

    def setting(self, key: str) -> Setting:
        """The :class:`Setting` of ``"study.knob"``; a KeyError naming the file otherwise."""
        try:
            return self.settings[key]
        except KeyError:
            raise KeyError(f"{key!r} is not a knob of profile {self.profile!r} in {settings_file.FILE.name}") from None

    def __getitem__(self, key: str) -> Any:
        return self.setting(key).value

    def knobs(self, study: str) -> dict[str, Any]:
        """``study``'s knobs as the code uses them (a fresh dict, collections nested), overrides applied."""
        out: dict[str, Any] = {}
        prefix = study + "."
        for key, s in self.settings.items():
            if not key.startswith(prefix):
                continue
            parts = key[len(prefix):].split(".")
            node = out
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = dict(s.value) if isinstance(s.value, Mapping) else s.value
        if not out:
            raise KeyError(f"profile {self.profile!r} has no [{self.profile}.{study}] table in {settings_file.FILE.name}")
        return out

    def show(self) -> str:
        """The configuration as ``profiles show`` prints it: every value with its source."""
        lines = [f"profile {self.profile}: {self.description}".rstrip(": ")]
        if self.notebook:
            lines.append(f"notebook {self.notebook}")
        study = None
        for key, s in self.settings.items():
            head, _, rest = key.partition(".")
            if head != study:
                study = head
                lines.append(f"\n[{study}]")
            lines.append(f"  {rest} = {fmt(s.value)}    ({s.source})")
        for j in self.judges.values():
            lines.append(f"\n[judges.{j.study}]")
            for name in ("backend", "model", "base_url", "reasoning_effort"):
                s = getattr(j, name)
                shown = fmt(s.value)
                lines.append(f"  {name} = {shown}    ({s.source})")
            lines.append(f"  key_variable = {j.key_variable or 'none (in process, no key)'}    (its name only: a key is never shown)")
        for title, group in (("gateway", self.gateway), ("embeddings", self.embeddings), ("paths", self.paths)):
            lines.append(f"\n[{title}]")
            lines += [f"  {k} = {fmt(s.value)}    ({s.source})" for k, s in group.items()]
        if self.parameters:
            lines.append("\n[parameters]")
            lines += [f"  {k} = {v!r}" for k, v in self.parameters.items()]
        return "\n".join(lines)


# ---------------------------------------------------------------- resolving

def declared_parameters(notebook: str | None, path: Path = settings_file.FILE) -> dict[str, dict[str, str]]:
    """``{PARAMETER: {knob | reads, meaning}}`` the settings file declares for ``notebook`` (``"05"``)."""
    if notebook is None:
        return {}
    table = settings_file.load(path).get("parameters", {})
    return dict(table.get(notebook.split("_")[0], {}))


def notebook_parameters(notebook: str | None, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The declared parameters of ``notebook`` found in ``namespace`` (a dict, or a notebook's
    ``globals()``); a plain dict without a notebook is taken as it is."""
    if notebook is None:
        return dict(namespace)
    if all(k.isupper() for k in namespace):  # an explicit dict: every name must be declared (resolve)
        return dict(namespace)
    return {k: namespace[k] for k in declared_parameters(notebook) if k in namespace}


def _cast(value: Any, like: Any, name: str) -> Any:
    """A papermill value (a literal, or a string from ``-p``) as the knob's type (``like``)."""
    if isinstance(like, bool):
        return _params.as_bool(value, name=name)
    if isinstance(like, tuple):
        items = _params.as_list(value, name=name) or []
        kind = type(like[0]) if like else str
        return tuple(kind(v) for v in items)
    if isinstance(like, (int, float)) and not isinstance(value, bool):
        try:
            out = type(like)(value) if not (isinstance(like, int) and isinstance(value, float)) else value
        except (TypeError, ValueError):
            raise ValueError(f"{name}: {value!r} is not a number") from None
        return out
    if isinstance(like, str) and _params.is_unset(value):
        return None
    return value


def _flat_sources(values: dict, sources: dict[str, str], profile: str, prefix: str = "") -> dict[str, Setting]:
    out: dict[str, Setting] = {}
    for key, value in values.items():
        if key == "collections" and isinstance(value, dict):
            for coll, sub in value.items():
                out.update(_flat_sources(sub, sources, profile, f"{prefix}collections.{coll}."))
            continue
        name = prefix + key
        origin = sources.get(name, profile)
        if isinstance(value, dict):  # an inline table merges key by key: each part's own profile
            parts = {sub: sources.get(f"{name}.{sub}", origin) for sub in value}
            kinds = list(dict.fromkeys(parts.values()))
            origin = kinds[0] if len(kinds) == 1 else "; ".join(
                f"{p}: {', '.join(k for k, v in parts.items() if v == p)}" for p in kinds)
        out[name] = Setting(value, f"profile {origin}")
    return out


def _var(environ: Mapping[str, str], name: str) -> str | None:
    return settings_file.env(name, environ)


def variable(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """One declared variable as this process (or ``environ``) sets it, for the resolvers of what a
    :class:`Config` holds (the judges in :mod:`judgelab.study_models`, the embeddings' endpoint):
    with :mod:`judgelab.gateway.settings`, the only readers of the environment besides this module."""
    return settings_file.env(name, environ)


def variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every declared variable this process (or ``environ``) sets: the parent of a child run's
    environment (a panel member's, :mod:`judgelab.estimate.panel`)."""
    return settings_file.environment(environ)


def path_setting(key: str, environ: Mapping[str, str] | None = None) -> Setting:
    """The location ``key`` (:data:`judgelab.settings_file.PATH_VARIABLES`) as the environment sets
    it, else ``Setting(None, "default")``."""
    value = settings_file.path_variable(key, environ)
    return Setting(value, f"environment {settings_file.PATH_VARIABLES[key]}") if value else Setting(None, DEFAULT)


def _gateway(environ: Mapping[str, str], backend: str | None, base_url: str | None,
             cache_mode: str | None) -> dict[str, Setting]:
    from judgelab.gateway import canary
    from judgelab.gateway.settings import resolve

    s = resolve(backend=backend, base_url=base_url, cache_mode=cache_mode, progress=False, environ=environ)
    spec = settings_file.declared()
    given = {"backend": backend, "base_url": base_url, "cache_mode": cache_mode}
    out: dict[str, Setting] = {}
    for field_, value in (("backend", s.backend), ("model", s.model), ("base_url", s.base_url),
                          ("cache_mode", s.cache_mode), ("cache_path", str(s.cache_path)),
                          ("concurrency", s.concurrency), ("rpm", s.rpm), ("tpm", s.tpm), ("batch", s.batch),
                          ("batch_poll_s", s.batch_poll_s), ("batch_fallback", s.batch_fallback),
                          ("llama_states_mb", s.llama_states_mb),
                          ("canary", canary.canary_enabled(s.backend, _var(environ, "JUDGELAB_CANARY"))),
                          ("stop_after", canary.stop_after_setting(_var(environ, "JUDGELAB_STOP_AFTER"))),
                          ("llama_threads", _var(environ, "JUDGELAB_LLAMA_THREADS")),
                          ("progress", _var(environ, "JUDGELAB_PROGRESS"))):
        var = next((v for v, d in spec.items() if d["key"] == f"gateway.{field_}"), None)
        if given.get(field_):
            source = f"parameter {field_.upper()}"
        elif var and _var(environ, var):
            source = f"environment {var}"
        elif field_ == "base_url" and value and _var(environ, "OPENAI_BASE_URL"):
            source = "environment OPENAI_BASE_URL"
        else:
            source = DEFAULT
        out[field_] = Setting(value, source)
    return out


def _judges(environ: Mapping[str, str], backend: str | None, model: str | None,
            base_url: str | None) -> dict[str, StudyJudge]:
    from judgelab.gateway.reasoning import reasoning_applies
    from judgelab.gateway.settings import api_key_for
    from judgelab.study_models import PAPER_JUDGES, resolve_judge

    out = {}
    for study in PAPER_JUDGES:
        j = resolve_judge(study, backend, model, base_url, environ=environ)
        url = base_url or _var(environ, "JUDGELAB_BASE_URL") or (_var(environ, "OPENAI_BASE_URL") if j.backend != "llamacpp" else None)
        url_var = "parameter BASE_URL" if base_url else ("environment JUDGELAB_BASE_URL" if _var(environ, "JUDGELAB_BASE_URL")
                                                         else "environment OPENAI_BASE_URL" if url else DEFAULT)
        b_source = ("parameter BACKEND" if backend else "environment JUDGELAB_BACKEND" if _var(environ, "JUDGELAB_BACKEND")
                    else "default (a base URL chooses openai-compatible)" if url else DEFAULT)
        m_source = j.source if j.source in (PAPER_JUDGES[study].source, "the backend's default") else (
            "parameter MODEL" if j.source == "the notebook's MODEL" else f"environment {j.source}")
        effort_var = f"JUDGELAB_{study.upper()}_REASONING_EFFORT"
        effort = (Setting(j.reasoning.override, f"environment {effort_var}") if j.reasoning.override
                  else Setting(j.reasoning.default, PAPER_JUDGES[study].source if j.reasoning.default else DEFAULT))
        if effort.value and not reasoning_applies(j.backend, j.model or ""):  # say so: the request carries none
            effort = Setting(effort.value, f"{effort.source}; not sent: {j.backend}"
                                           f"{' model ' + j.model if j.model else ''} takes no reasoning effort")
        key_var = None if j.backend == "llamacpp" else api_key_for(url, environ)[1]
        out[study] = StudyJudge(study, Setting(j.backend, b_source), Setting(j.model, m_source),
                                Setting(url if j.backend != "llamacpp" else None, url_var if j.backend != "llamacpp" else DEFAULT),
                                effort, key_var)
    return out


def _gateway_settings(environ: Mapping[str, str], gateway: Mapping[str, Setting], backend: str | None,
                      model: str | None, base_url: str | None, cache_mode: str | None) -> dict[str, Any]:
    from judgelab.gateway.settings import progress_setting as setting
    from judgelab.gateway.settings import resolve as resolve_gateway
    from judgelab.study_models import PAPER_JUDGES, resolve_judge

    out = {}
    for study in PAPER_JUDGES:
        j = resolve_judge(study, backend, model, base_url, environ=environ)
        out[study] = resolve_gateway(backend=backend, model=j.model, base_url=base_url, cache_mode=cache_mode,
                                     progress=setting(_var(environ, "JUDGELAB_PROGRESS") or "")[0], environ=environ,
                                     reasoning=j.reasoning, study=study, canary=gateway["canary"].value,
                                     stop_after=gateway["stop_after"].value)
    return out


def _paths(environ: Mapping[str, str]) -> dict[str, Setting]:
    from judgelab import paths

    root = path_setting("project_root", environ).value or paths.found_root()
    defaults = {"output_root": root, "project_root": root, "data_raw": Path(root) / "data" / "raw",
                "data_mirror": None, "tiktoken_cache": Path(root) / ".cache" / "tiktoken"}
    out = {}
    for key in settings_file.PATH_VARIABLES:
        s = path_setting(key, environ)
        out[key] = s if s.value else Setting(None if defaults[key] is None else str(defaults[key]), DEFAULT)
    return out


def resolve(profile: str, notebook: str | None = None, params: Mapping[str, Any] | None = None,
            environ: Mapping[str, str] | None = None, path: Path = settings_file.FILE) -> Config:
    """The configuration of a run of ``profile`` (module docstring). ``params``: the notebook's
    parameters (None values mean "the profile's"); a parameter the settings file does not declare
    for ``notebook`` is an error naming the file."""
    environ = settings_file.environment() if environ is None else settings_file.environment(environ)
    settings: dict[str, Setting] = {}
    for study in settings_file.studies(profile, path):
        values, sources = settings_file.resolved(study, profile, path)
        settings.update({f"{study}.{k}": s for k, s in _flat_sources(values, sources, profile).items()})
    given = {k: v for k, v in (params or {}).items() if not _params.is_unset(v)}
    declared = declared_parameters(notebook, path)
    for name, value in given.items():
        spec = declared.get(name)
        if spec is None and notebook is not None:
            raise settings_file.ProfileError(
                f"{settings_file.FILE.name}: notebook {notebook}'s parameter {name} is not declared in "
                f'[parameters."{notebook.split("_")[0]}"]; declare what it sets there')
        knob = (spec or {}).get("knob")
        if knob:
            targets = [k for k in settings if k == knob or (("*" in knob) and _glob(knob, k))]
            if not targets:
                raise settings_file.ProfileError(f"{settings_file.FILE.name}: parameter {name} sets {knob!r}, "
                                                 f"which profile {profile!r} does not have")
            for key in targets:
                settings[key] = Setting(_cast(value, settings[key].value, name), f"parameter {name}")
    backend, model, base_url, cache_mode = (given.get(k) for k in ("BACKEND", "MODEL", "BASE_URL", "CACHE_MODE"))
    description = settings_file.load(path)[settings_file.check(profile, path)].get("description", "")
    gateway = _gateway(environ, backend, base_url, cache_mode)
    # the pipeline sets both; a notebook that reaches no prompt gets an empty list (not None: run by hand)
    kernel_nb, prompts = _var(environ, "JUDGELAB_RUN_NOTEBOOK"), _var(environ, "JUDGELAB_RUN_PROMPT_VERSIONS")
    kernel = {"notebook": Setting(kernel_nb, "environment JUDGELAB_RUN_NOTEBOOK"),
              "prompt_versions": Setting(tuple(v for v in (prompts or "").split(",") if v) if (prompts or kernel_nb)
                                         else None, "environment JUDGELAB_RUN_PROMPT_VERSIONS")}
    return Config(profile, description, notebook, _frozen(settings), _frozen(_judges(environ, backend, model, base_url)),
                  _frozen(gateway), _frozen(_paths(environ)), _frozen(given), _frozen(_embeddings(environ)), _frozen(kernel),
                  _frozen(_gateway_settings(environ, gateway, backend, model, base_url, cache_mode)))


def of(run: "Config | str") -> Config:
    """``run`` as a resolved :class:`Config`: a Config as it is (what library code is handed by
    its caller: a notebook's ``run.config``, ``make estimate``'s, a benchmark's); a profile's name
    resolved here, once, with this process's environment and no notebook parameters (for a test or
    the console). The one way library code turns what it is given into settings."""
    if isinstance(run, Config):
        return run
    if isinstance(run, str):
        return resolve(run)
    raise TypeError(f"expected a resolved judgelab.config.Config or a profile's name, got {type(run).__name__}")


def _embeddings(environ: Mapping[str, str]) -> dict[str, Setting]:
    for var in ("OPENAI_BASE_URL", "JUDGELAB_BASE_URL"):  # the embedding server follows the chat one's variable
        if _var(environ, var):
            return {"base_url": Setting(_var(environ, var), f"environment {var}")}
    return {"base_url": Setting(None, "default (OpenAI's own endpoint)")}


def _glob(pattern: str, key: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase(key, pattern)
