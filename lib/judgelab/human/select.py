"""Which rated stories a run judges: stratified by source, shortest-first or seeded random."""
from __future__ import annotations

import numpy as np
import pandas as pd

STRATEGIES: tuple[str, ...] = ("shortest", "random")


def select_stories(stories: pd.DataFrame, n: int, strategy: str = "random", seed: int = 0) -> pd.DataFrame:
    """``n`` stories spread over the sources (round robin), in the order they were taken.

    Within each source the stories are ordered shortest first (``shortest``: cheap smoke runs)
    or by a seeded shuffle (``random``); the sources take turns — in ``shortest`` mode the source
    whose next story is shortest goes first, in ``random`` mode in a seeded order — so that
    ``n`` >= the number of sources covers every source. ``n`` larger than the table returns all.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
    missing = [c for c in ("story", "source", "words") if c not in stories.columns]
    if missing:
        raise ValueError(f"stories: missing column(s) {missing}")
    if n <= 0:
        return stories.iloc[0:0].copy()
    rng = np.random.default_rng(seed)
    queues = {}
    for source, sub in stories.groupby("source", sort=True):
        if strategy == "shortest":
            sub = sub.sort_values(["words", "story"])
        else:
            sub = sub.sort_values("story").iloc[rng.permutation(len(sub))]
        queues[source] = list(sub.index)
    order = sorted(queues)
    if strategy == "random":
        order = [order[i] for i in rng.permutation(len(order))]
    taken: list = []
    while len(taken) < n and any(queues.values()):
        live = [s for s in order if queues[s]]
        if strategy == "shortest":
            live.sort(key=lambda s: (stories.at[queues[s][0], "words"], s))
        for s in live:
            if len(taken) == n:
                break
            taken.append(queues[s].pop(0))
    return stories.loc[taken].reset_index(drop=True)
