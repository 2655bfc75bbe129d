"""The appendix's requests (notebook 11), built by the code that sends them: the holistic judge's
one turn per story (exact) and one SAGE layer in one mode on the first ``sage_max_stories``
(:func:`judgelab.estimate.sage.evaluation_calls`, as for notebooks 02-04).
"""
from __future__ import annotations

import pandas as pd

from judgelab import config
from judgelab.estimate import sage
from judgelab.estimate.counting import TokenCounter
from judgelab.human import DATASETS, appendix, holistic
from judgelab.sage.protocol import leak_check


def holistic_rows(stories: pd.DataFrame, knobs: dict, counter: TokenCounter) -> list[dict]:
    rows = []
    for s in stories.itertuples(index=False):
        req = holistic.build_request(s.story, s.text, dataset=s.dataset, max_tokens=knobs["holistic_max_tokens"],
                                     temperature=knobs["temperature"], seed=knobs["seed"],
                                     reason_chars=knobs["holistic_reason_chars"],
                                     reasoning_effort=knobs.get("holistic_reasoning_effort"))
        rows.append({"notebook": "11", "study": "human", "layer": "", "mode": "holistic",
                     "item": f"{s.dataset}:{s.story}", "track": "holistic", "round": 1, "first_round": True,
                     **counter.one_turn(req)})
    return rows


def appendix_calls(profile: config.Config | str, counter: TokenCounter) -> tuple[pd.DataFrame, str]:
    """Notebook 11's requests for the configuration ``profile`` (:func:`judgelab.config.of`) and a
    note on how they were built."""
    profile = config.of(profile)
    knobs = profile.knobs("human")
    n_stories = appendix.stories_per_dataset(knobs, list(DATASETS))
    stories = appendix.stories_for(n_stories, knobs)
    rows = holistic_rows(stories, knobs, counter)
    judged = stories.head(int(knobs["sage_max_stories"])) if knobs.get("sage_max_stories") is not None else stories
    corpus = appendix.sage_corpus(judged)
    surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    items, cfg = sage.items_for(corpus, knobs["sage_layer"], profile, counter, surnames,
                                stories=list(judged["story"]), modes=[knobs["sage_mode"]], sensitivity=False)
    caches = {size: sage.PrefixCache(counter) for size in ("min", "max")}
    for item in items:
        rows += sage.evaluation_calls(item, cfg, counter, notebook="11", caches=caches)
    return pd.DataFrame(rows), (f"exact first rounds: holistic judge on {len(stories)} stories, SAGE "
                                f"{knobs['sage_layer']} {knobs['sage_mode']} on {len(judged)}")
