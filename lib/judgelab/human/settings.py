"""The appendix's human-rated data sets; its knobs per profile are in ``profiles.toml`` (``[<profile>.human]``)."""
from __future__ import annotations

DATASETS: tuple[str, ...] = ("confederacy", "artifice")
