"""Who made an output: the provenance sidecars and each notebook's call ledger (no state: a
notebook's :class:`judgelab.run.Run` holds what they say).

Every table and figure a run writes gets a sidecar ``<name>.provenance.json`` beside it; the CSV
is left as it was, so that a replayed table stays byte-identical. A sidecar is one flat JSON
object (strings, numbers, booleans, null, or lists of strings):

- ``output``, ``kind``, ``file``, ``sha256``: the table or figure name, ``"table"`` or
  ``"figure"``, the file described (the PNG for figures) and its SHA-256 (hex);
- ``notebook`` (``09_judge_modes``) and ``profile``, null when unknown;
- ``judge`` (``"<backend>:<model>"``, or ``"none"`` when no LLM made these numbers), ``backend``,
  ``model`` and ``base_url_host`` (host[:port] of the endpoint, never a key or credentials) of the
  study whose table it is; ``judges`` (``"<study>=<backend>:<model>"``) the judge of each study
  the output covers (a notebook with two judges: each table its own);
- ``embedded_small_model`` and ``warning``: true and :data:`SMALL_MODEL_WARNING` when the bundled
  SmolLM2-135M answered, else false and ``""``;
- ``prompt_versions`` (of the prompt files the notebook reaches; empty without a judge),
  ``seeds`` (``"<knob>=<value>"`` of every seed knob the notebook read, as used: a parameter that
  set one wins over the profile) and ``parameters`` (``"<NAME>=<value>"`` of each notebook
  parameter given a value: what a variant run changed; empty for a plain run);
- ``git_commit``, ``git_dirty`` (tracked files differ from it), ``git_changed`` (which: the claims
  scorecard reads them) and ``written_at`` (UTC, ISO 8601).

``notebook`` and ``prompt_versions`` come from the kernel's environment (:data:`ENV_NOTEBOOK`,
:data:`ENV_PROMPTS`, set by ``python -m judgelab.pipeline run``) or, run by hand, from the
notebook's file and imports; the rest from the run (a notebook with two judges names each
table's own). The
gateways' ledgers are summed into ``results/runs/ledgers/<notebook>.json`` (:func:`write_ledger`)
for :mod:`judgelab.runrecord`.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from judgelab import paths

#: Set by ``judgelab.pipeline`` for the kernel that executes a notebook.
ENV_NOTEBOOK = "JUDGELAB_RUN_NOTEBOOK"
ENV_PROMPTS = "JUDGELAB_RUN_PROMPT_VERSIONS"  # comma-separated

SMALL_MODEL_WARNING = (
    "EMBEDDED SmolLM2-135M: these numbers show that the pipeline runs, "
    "not the papers' findings."
)


def is_embedded_small_model(backend: str | None, model: str | None) -> bool:
    """True when the numbers come from the bundled SmolLM2-135M GGUF (or an unnamed llamacpp
    default): its judgments are close to random, so every output made with it must say so. It
    lives here, below the gateway and the reports, so that the gateway never imports pandas."""
    name = (model or "").lower()
    if "smollm2" in name and "135m" in name:
        return True
    return (backend or "") == "llamacpp" and not name

def url_host(url: str | None) -> str | None:
    """``host[:port]`` of ``url``: user, password, path and query are dropped (never a key)."""
    if not url:
        return None
    parts = urlsplit(url if "//" in url else "//" + url)
    host = parts.hostname
    if not host:
        return None
    try:
        port = parts.port
    except ValueError:  # a malformed port says nothing useful
        port = None
    return f"{host}:{port}" if port else host


# ---------------------------------------------------------------- reading it

def git_state(root: str | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty: a tracked file differs) at ``root`` now (not cached: a commit or an edit
    between two outputs of one kernel shows); (None, None) without git."""
    root = root or str(paths.project_root())
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=20, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(status.strip())


def changed_files(root: str | None = None) -> list[str] | None:
    """The tracked files that differ from HEAD (paths relative to the repository), sorted; None
    without git. A sidecar lists them (``git_changed``), so the claims scorecard can tell whether
    uncommitted changes touch the code a claim depends on."""
    root = root or str(paths.project_root())
    try:
        out = subprocess.run(["git", "diff", "--name-only", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sorted(line.strip() for line in out.splitlines() if line.strip())


def context(*, notebook: str | None = None, profile: str | None = None, backend: str | None = None,
            model: str | None = None, base_url: str | None = None, prompt_versions: list[str] | None = None,
            seeds: dict[str, Any] | None = None, parameters: dict[str, Any] | None = None,
            judges: dict[str, str] | None = None) -> dict[str, Any]:
    """A sidecar's fields (module docstring) but output, file and hash; all None: outside a run."""
    judged = bool(backend or model)
    small = judged and is_embedded_small_model(backend, model)
    commit, dirty = git_state()
    return {
        "notebook": notebook,
        "profile": profile,
        "judge": f"{backend or '?'}:{model or '?'}" if judged else "none",
        "judges": [f"{s}={j}" for s, j in (judges or {}).items()],
        "backend": backend if judged else None,
        "model": model if judged else None,
        "base_url_host": url_host(base_url) if judged else None,
        "embedded_small_model": bool(small),
        "warning": SMALL_MODEL_WARNING if small else "",
        "prompt_versions": list(prompt_versions or []) if judged else [],
        "seeds": [f"{k}={v}" for k, v in sorted((seeds or {}).items())],
        "parameters": [f"{k}={v!r}" for k, v in sorted((parameters or {}).items())],
        "git_commit": commit,
        "git_dirty": dirty,
        "git_changed": (changed_files() or []) if dirty else [],
        "written_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def sidecar_path(path: Path) -> Path:
    """``x.csv`` / ``x.png`` -> ``x.provenance.json`` beside it."""
    path = Path(path)
    return path.with_name(f"{path.stem}.provenance.json")


def write_sidecar(path: Path, kind: str, fields: dict[str, Any] | None = None) -> Path:
    """Write the sidecar of the output ``path`` (``kind``: table or figure); return its path."""
    path = Path(path)
    record = {"output": path.stem, "kind": kind, "file": path.name,
              "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), **(context() if fields is None else fields)}
    out = sidecar_path(path)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return out


def read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar of an output file (or the sidecar file itself), as a dict."""
    path = Path(path)
    side = path if path.name.endswith(".provenance.json") else sidecar_path(path)
    try:
        return json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{side}: no provenance sidecar; write the output with judgelab.reporting") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{side}: not valid JSON ({exc}); re-run its notebook") from None


# ---------------------------------------------------------------- the calls of a notebook

def ledger_dir(root: Path | None = None) -> Path:
    d = (root or paths.output_root()) / "results" / "runs" / "ledgers"
    d.mkdir(parents=True, exist_ok=True)
    return d


def summarize_ledger(frame) -> dict[str, Any]:
    """Calls (fresh, cached, failed), tokens and USD of a ledger frame (``Gateway.ledger_frame``).

    ``cost_usd`` is what the calls cost when made fresh, ``spent_usd`` what this run paid (cache
    hits cost nothing); NaN (an unpriced model) counts as 0 and sets ``unpriced``."""
    def total(col):
        return int(frame[col].fillna(0).sum()) if col in frame and len(frame) else 0

    def usd(col):
        return round(float(frame[col].fillna(0).sum()), 6) if col in frame and len(frame) else 0.0

    n = len(frame)
    cached = int(frame["cached"].astype(bool).sum()) if n else 0
    return {
        "calls": n,
        "fresh": n - cached,
        "cached": cached,
        "failed": int((frame["status"] == "failed").sum()) if n else 0,
        "input_tokens": total("input_tokens"),
        "output_tokens": total("output_tokens"),
        "cached_tokens": total("cached_tokens"),
        "cost_usd": usd("cost_usd"),
        "spent_usd": usd("spent_usd"),
        "unpriced": bool(n and frame["cost_usd"].isna().any()),
        "judges": sorted({f"{b}:{m}" for b, m in zip(frame["backend"], frame["model"])}) if n else [],
    }


def write_ledger(notebook: str, ledgers: list, root: Path | None = None) -> Path | None:
    """Sum ``ledgers`` (a run's gateways') into ``<root>/results/runs/ledgers/<notebook>.json`` (None
    without any); their rows (one per call) go to ``<notebook>.csv`` for ``judgelab.estimate compare``."""
    if not notebook or not ledgers:
        return None
    import pandas as pd

    frames = [lg.frame() for lg in ledgers]
    frame = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else pd.DataFrame()
    out = ledger_dir(root) / f"{notebook}.json"
    out.write_text(json.dumps({"notebook": notebook, **summarize_ledger(frame)}, indent=1) + "\n", encoding="utf-8")
    frame.to_csv(out.with_suffix(".csv"), index=False)
    return out
