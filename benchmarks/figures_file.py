"""Where a benchmark's figures go: ``results/bench/<name>.json``, and one ``<name>.<figure> value``
line each on stdout (what ``make bench`` prints)."""
from __future__ import annotations

import json
from pathlib import Path


def write_figures(out: Path, name: str, figures: dict, hidden: tuple[str, ...] = ()) -> None:
    """Write ``figures`` to ``out`` and print them, except the ``hidden`` ones (per-call detail
    kept in the file only)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2))
    for key, value in figures.items():
        if key not in hidden:
            print(f"{name}.{key} {value:.4g}" if isinstance(value, float) else f"{name}.{key} {value}")
