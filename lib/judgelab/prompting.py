"""Prompt files shared by the studies: front matter with a ``version``, then ``## system``,
``## user`` and optional ``## explanations`` sections.

The version enters the gateway's cache key (``ChatRequest.template_version``), so editing a
prompt without bumping it would silently reuse old answers: every prompt file must declare one.
HTML comments are notes to the prompt's readers and are never sent.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_SECTION = re.compile(r"^## (system|user|explanations)\s*$", re.MULTILINE)
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class PromptTemplate:
    """One mode's prompt file, parsed: version, mode, and the three text sections."""

    mode: str
    version: str
    system: str
    user: str
    explanations: str
    path: Path



def parse_template(text: str, mode: str, path: Path | None = None) -> PromptTemplate:
    """Parse a prompt file's text (front matter with ``version``; system/user/explanations sections)."""
    front = _FRONT.match(text)
    if not front:
        raise ValueError(f"prompt {path or mode}: missing '---' front matter with a version")
    meta = dict(
        (k.strip(), v.strip())
        for k, v in (line.split(":", 1) for line in front.group(1).splitlines() if ":" in line)
    )
    if "version" not in meta:
        raise ValueError(f"prompt {path or mode}: front matter has no 'version'")
    body = _COMMENT.sub("", text[front.end():])
    parts = _SECTION.split(body)
    sections = {name: parts[i + 1] for i, name in enumerate(parts) if name in ("system", "user", "explanations") and i % 2 == 1}
    for name in ("system", "user"):
        if name not in sections:
            raise ValueError(f"prompt {path or mode}: no '## {name}' section")
    return PromptTemplate(
        mode=meta.get("mode", mode), version=meta["version"],
        system=sections["system"].strip("\n"), user=sections["user"].strip("\n"),
        explanations=sections.get("explanations", "").strip("\n"), path=Path(path or ""),
    )
