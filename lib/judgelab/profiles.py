"""Profiles, not edits: one parameter chooses the size of a run.

``smoke`` — CI, a few items, minutes. ``demo`` — a real small run on the embedded engines.
``paper`` — the papers' full design. Each study keeps its own knobs in a dict keyed by profile.
"""
from __future__ import annotations

from typing import Any, Mapping

PROFILES = ("smoke", "demo", "paper")


def check(name: str) -> str:
    """Return ``name`` if it is a known profile; otherwise raise a ValueError that lists them."""
    if name not in PROFILES:
        raise ValueError(f"unknown PROFILE {name!r}; choose one of {', '.join(PROFILES)}")
    return name


def pick(table: Mapping[str, Mapping[str, Any]], name: str) -> dict[str, Any]:
    """The knobs of profile ``name`` from a study's ``{profile: {knob: value}}`` table."""
    check(name)
    return dict(table[name])
