"""Papermill passes notebook parameters as Python literals or, from the command line (``-p``), as
strings. One parser for all notebooks, so that ``"off"`` means False everywhere.
"""
from __future__ import annotations

from typing import Any, Iterable

_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
_FALSE = frozenset({"0", "false", "no", "off", "n", "f", ""})
_NONE = frozenset({"none", "null", "default"})


def as_bool(value: Any, *, name: str = "parameter") -> bool:
    """True/False from a bool, a number or a word of ``_TRUE`` / ``_FALSE`` (any case); anything
    else is an error naming the parameter, never silently truthy (``bool("off")`` is True)."""
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)):
        return bool(value)
    word = str(value).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"{name}: {value!r} is not a yes/no value (use true/false, on/off, 1/0)")


def is_unset(value: Any) -> bool:
    """None, or a string meaning "use the default" (``"none"``, ``"null"``, ``"default"``)."""
    return value is None or (isinstance(value, str) and value.strip().lower() in _NONE)


def as_optional_int(value: Any, *, name: str = "parameter", all_words: Iterable[str] = ("all",)) -> int | None:
    """An int, or None for unset / "all" (= no limit)."""
    if is_unset(value) or (isinstance(value, str) and value.strip().lower() in set(all_words)):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {value!r} is not a whole number (or 'all' / None)") from None


def as_list(value: Any, *, name: str = "parameter", cast=str) -> list | None:
    """A list from a list/tuple, or a comma-separated string (``"news,vispub"``); None stays None."""
    if is_unset(value):
        return None
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    try:
        return [cast(v.strip() if isinstance(v, str) else v) for v in items if str(v).strip()]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {value!r} is not a comma-separated list of {cast.__name__}") from None
