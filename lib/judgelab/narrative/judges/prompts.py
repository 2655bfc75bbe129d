"""Render the narrative judge's four prompt modes (the Narrative paper, section 3.4; notebook 09).

The prompts, ``prompts/narrative/judge_<mode>.md``, follow the paper's described design, not its
wording. Each has a front matter ``version`` (part of the gateway's cache key), then ``## system``,
``## user`` and ``## explanations`` sections with :class:`string.Template` placeholders, so that
literal braces never need escaping. The narrative is a numbered list of document titles (paper
section 5.6).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Sequence

from judgelab import paths
from judgelab.prompting import PromptTemplate, parse_template

MODES: tuple[str, ...] = ("simple", "cot", "standard", "complex")
"""The four evaluation modes in the paper's order of increasing prompt complexity."""

COLLECTION_NOUNS: dict[str, str] = {"news": "news articles", "vispub": "scientific articles"}
"""How a prompt names the documents of each collection (paper, caption of Figure 4)."""



@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered prompt: the system and user messages plus the template version."""

    mode: str
    system: str
    user: str
    template_version: str


def check_mode(mode: str) -> str:
    """Return ``mode`` if it is one of :data:`MODES`, else raise ValueError listing them."""
    if mode not in MODES:
        raise ValueError(f"unknown judge mode {mode!r}; choose one of {', '.join(MODES)}")
    return mode


def prompt_path(mode: str, prompts_dir: Path | None = None) -> Path:
    """``prompts/narrative/judge_<mode>.md`` (or under ``prompts_dir`` when given)."""
    base = Path(prompts_dir) if prompts_dir else paths.prompts_dir() / "narrative"
    return base / f"judge_{check_mode(mode)}.md"


@lru_cache(maxsize=None)
def _load(path: Path) -> PromptTemplate:
    return parse_template(path.read_text(encoding="utf-8"), path.stem.removeprefix("judge_"), path)


def load_template(mode: str, prompts_dir: Path | None = None) -> PromptTemplate:
    """The parsed prompt file of ``mode``."""
    return _load(prompt_path(mode, prompts_dir))


def template_version(mode: str, prompts_dir: Path | None = None) -> str:
    """The version string of ``mode``'s prompt file, e.g. ``narr-judge-simple-v1``."""
    return load_template(mode, prompts_dir).version


def collection_noun(collection: str) -> str:
    """The wording for a collection's documents: ``news`` -> "news articles", ``vispub`` ->
    "scientific articles"; any other value is used as written (e.g. "court rulings")."""
    return COLLECTION_NOUNS.get(collection, collection)


def format_narrative(titles: Sequence[str]) -> str:
    """The narrative as a numbered list of titles ("1. ...", "2. ..."), each title's whitespace
    collapsed so that each document takes exactly one line."""
    if len(titles) == 0:
        raise ValueError("a narrative needs at least one document")
    return "\n".join(f"{i}. {' '.join(str(t).split())}" for i, t in enumerate(titles, start=1))


def render(
    mode: str,
    titles: Sequence[str],
    collection: str = "news",
    *,
    explanations: bool = False,
    prompts_dir: Path | None = None,
) -> RenderedPrompt:
    """Render one judge prompt of ``mode`` for the narrative's ``titles`` (path order);
    ``collection`` is mapped by :func:`collection_noun`, ``explanations`` asks for the optional
    explanation fields (off by default, as in the paper)."""
    tpl = load_template(mode, prompts_dir)
    values = {
        "collection_noun": collection_noun(collection),
        "n_documents": str(len(titles)),
        "narrative": format_narrative(titles),
        "explanations": tpl.explanations if explanations else "",
    }
    return RenderedPrompt(
        mode=mode,
        system=Template(tpl.system).substitute(values),
        user=Template(tpl.user).substitute(values),
        template_version=tpl.version,
    )
