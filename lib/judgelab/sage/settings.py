"""The SAGE design's fixed names; the knobs of each profile are in ``profiles.toml`` (``[<profile>.sage]``)."""
from __future__ import annotations

LAYERS: tuple[str, ...] = ("L4", "L5", "L6")
MODES: tuple[str, ...] = ("content", "title")
CATEGORIES: tuple[str, ...] = ("canonical", "pulp", "llm")
CONTEXT_POLICIES: tuple[str, ...] = ("head_tail", "error")
