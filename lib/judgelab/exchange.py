"""The judge at work: what one item's judge was sent and what it answered, round by round.

Read from the response cache and, where a fresh call wrote one, its transcript line (which adds
the replies that failed validation and were repaired), never by calling a model. An *item* is the
calls whose tags agree on everything but the turn keys (SAGE's ``track`` and ``round``); each turn
is shown by its first call, so a rerun under the same tags (Table 9's anonymous-author title run)
never interleaves. Each call after the first shows only the messages it added (SAGE resends the
growing conversation every round); long texts are cut in the middle.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from judgelab.gateway.cache import ResponseCache

TURN_KEYS = ("track", "round")
"""Tags that number the calls of one item rather than name the item."""
TRACK_ORDER = {"evaluator": 0, "validator_blind": 1, "validator_review": 2}
"""SAGE's conversations in the order they happen (judgelab.sage.protocol.evaluation)."""


@dataclass
class Call:
    tags: dict[str, Any]
    new_messages: list[dict[str, str]]
    replies: list[dict[str, Any]]
    """``{"reply": text, "error": None | str}`` per attempt, the accepted one last."""
    backend: str
    model: str


@dataclass
class Exchange:
    item: dict[str, Any]
    calls: list[Call] = field(default_factory=list)


def default_cache_path() -> Path:
    from judgelab.gateway.settings import default_cache_path as resolved

    return resolved()


def elide(text: str | None, limit: int = 700) -> str:
    """``text`` if at most ``limit`` characters, else its head and tail around a note of what was cut."""
    text = text or ""
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    cut = len(text) - 2 * keep
    return f"{text[:keep]}\n[... {cut:,} characters elided ...]\n{text[-keep:]}"


def _matches(tags: dict | None, want: dict[str, Any]) -> bool:
    tags = tags or {}
    return all(str(tags.get(k)) == str(v) for k, v in want.items())


def _item_of(tags: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in tags.items() if k not in TURN_KEYS))


def _turn_order(tags: dict) -> tuple:
    track = str(tags.get("track", ""))
    try:
        rnd = int(tags.get("round", 0))
    except (TypeError, ValueError):
        rnd = 0
    return (TRACK_ORDER.get(track, 9), track, rnd)


def read_transcripts(folder: Path, keys: set[str]) -> dict[str, dict]:
    """The last transcript line of each cache key in ``keys`` (lines of other keys are skipped)."""
    found: dict[str, dict] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {n} is not JSON ({exc})") from exc
                if rec.get("key") in keys:
                    found[rec["key"]] = rec
    return found


def _new_messages(messages: list[dict], previous: list[dict]) -> list[dict]:
    """The messages after the longest prefix shared with the previous call's conversation."""
    n = 0
    while n < min(len(messages), len(previous)) and \
            (messages[n].get("role"), messages[n].get("content")) == (previous[n].get("role"), previous[n].get("content")):
        n += 1
    return messages[n:]


def load_exchange(match: dict[str, Any], item: dict[str, Any] | None = None, *,
                  cache_path: str | Path | None = None, transcripts: str | Path | None = None) -> Exchange | None:
    """One item's calls in turn order, among the cached calls whose tags contain ``match``:
    the item ``item`` names (e.g. ``{"item": "kafka_metamorphosis", "mode": "content"}``), else
    that of the most recent match; None when nothing matches."""
    path = Path(cache_path) if cache_path else default_cache_path()
    if not path.exists():
        return None
    cache = ResponseCache(path)
    try:
        want = {**match, **(item or {})}
        # a notebook reusing a study's requests tags them with its name (12's probes): not the study's
        rows = [r for r in cache.rows() if _matches(r.get("tags"), want)
                and ("notebook" in want or "notebook" not in (r.get("tags") or {}))]
    finally:
        cache.close()
    if not rows:
        return None
    for r in rows:
        r["tags"] = r.get("tags") or {}
    latest = rows[-1]  # the cache's rows come oldest first
    chosen, first = _item_of(latest["tags"]), {}
    for r in rows:
        if _item_of(r["tags"]) == chosen and (r["backend"], r["model"]) == (latest["backend"], latest["model"]):
            first.setdefault(tuple(str(r["tags"].get(k)) for k in TURN_KEYS), r)
    mine = sorted(first.values(), key=lambda r: _turn_order(r["tags"]))
    folder = Path(transcripts) if transcripts else path.parent / "transcripts"
    lines = read_transcripts(folder, {r["key"] for r in mine})
    out = Exchange(item=dict(chosen))
    previous: list[dict] = []
    for r in mine:
        sent = (r.get("request") or {}).get("messages") or []
        line = lines.get(r["key"])
        replies = ([{"reply": t.get("reply"), "error": t.get("error")} for t in line.get("replies") or []]
                   if line else []) or [{"reply": r.get("text"), "error": None}]
        out.calls.append(Call(tags=dict(r["tags"]), new_messages=_new_messages(sent, previous),
                              replies=replies, backend=r["backend"], model=r["model"]))
        previous = sent + [{"role": "assistant", "content": r.get("text")}]
    return out


def _fence(text: str) -> str:
    return "```text\n" + text.replace("```", "ʼʼʼ") + "\n```"


def exchange_markdown(ex: Exchange | None, limit: int = 700) -> str:
    """The exchange as Markdown: per call, the new messages and every reply (long texts elided)."""
    if ex is None:
        return "_No cached call matches: run the notebook first (nothing here calls a model)._"
    head = ", ".join(f"{k}={v}" for k, v in ex.item.items())
    parts = [f"**One item, as the judge saw it:** {head}" if head else "**One item, as the judge saw it**"]
    if ex.calls:
        parts[0] += f" — judge `{ex.calls[0].backend}:{ex.calls[0].model}`, {len(ex.calls)} call(s)"
    for i, call in enumerate(ex.calls, 1):
        turn = ", ".join(f"{k} {call.tags[k]}" for k in TURN_KEYS if k in call.tags) or f"call {i}"
        parts.append(f"#### {turn}")
        for m in call.new_messages:
            parts.append(f"*{m.get('role')}* ({len(m.get('content') or ''):,} characters)\n\n"
                         + _fence(elide(m.get("content"), limit)))
        for j, rep in enumerate(call.replies, 1):
            label = "reply" if len(call.replies) == 1 else f"reply, attempt {j}"
            note = f" — rejected: {elide(rep['error'], 200)}" if rep.get("error") else ""
            parts.append(f"*{label}*{note}\n\n" + _fence(elide(rep.get("reply"), limit)))
    return "\n\n".join(parts)


def show(match: dict[str, Any], item: dict[str, Any] | None = None, limit: int = 700, **where) -> Exchange | None:
    """Display one item's exchange in a notebook (Markdown) and return it."""
    from IPython.display import Markdown, display

    ex = load_exchange(match, item, **where)
    display(Markdown(exchange_markdown(ex, limit)))
    return ex
