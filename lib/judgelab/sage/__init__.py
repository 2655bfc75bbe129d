"""The SAGE study: L1-L3 rule-based features, L4-L6 LLM-judged layers, and their statistics.

Paper: Wang & Zhou 2026, arXiv:2605.07102 (SAGE: hierarchical, ontology-grounded LLM
evaluation of literary quality). The design's fixed names are below; each profile's knobs are in
``profiles.toml`` (``[<profile>.sage]``).
"""
from __future__ import annotations

LAYERS: tuple[str, ...] = ("L4", "L5", "L6")
MODES: tuple[str, ...] = ("content", "title")
CATEGORIES: tuple[str, ...] = ("canonical", "pulp", "llm")
CONTEXT_POLICIES: tuple[str, ...] = ("head_tail", "error")
