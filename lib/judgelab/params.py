"""Papermill passes notebook parameters as Python literals or, from the command line (``-p``), as
strings. One parser for all notebooks, so that ``"off"`` means False everywhere; and one error,
:class:`InputProblems`, for a user's input (`make own`'s stories, collection and endpoint pairs)
that lists every problem at once.
"""
from __future__ import annotations

from typing import Any, Iterable

class InputProblems(ValueError):
    """A user's input is wrong: the message lists every problem (where it is, what, the fix) at
    once, after a count and what was *not* done. Subclasses name the input (``what``) and that
    consequence; ``problems`` keeps the list."""

    what = "your input"
    consequence = "nothing was run"

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__(f"{len(self.problems)} problem(s) with {self.what}; {self.consequence}:\n"
                         + "\n".join(f"- {p}" for p in self.problems))


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
