"""Path-length investigation on the news collection, alone (notebook 08 runs it when the profile's
``investigate_lengths`` is on).

Runs :func:`judgelab.narrative.paths.length_investigation.path_length_investigation` on the news
collection with the authors' embeddings, the profile's pairs and main seed (default the paper
profile: all 540 articles, 200 pairs), and writes ``narr_path_length_investigation`` as notebook
08 does (``Run.table``: the CSV and its provenance sidecar, under the output root).
Usage: ``JUDGELAB_LLAMA_THREADS=1 .venv/bin/python benchmarks/narr_path_length_investigation.py``
(``--profile smoke`` or ``--quick`` for the smoke profile's subset and pairs: seconds, for the test suite).
"""
from __future__ import annotations

import argparse

import pandas as pd

from judgelab import config
from judgelab.narrative.landscape.build import prepare_collection
from judgelab.narrative.paths.length_investigation import path_length_investigation
from judgelab.narrative.paths.paper_values import PAPER_TABLE1
from judgelab.narrative.settings import DEFAULT_PARAMS
from judgelab.run import Run


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="paper", help="whose news knobs (default paper)")
    ap.add_argument("--quick", action="store_true", help="the smoke profile's subset and pairs (seconds)")
    args = ap.parse_args(argv)
    profile = "smoke" if args.quick else args.profile
    knobs = config.resolve(profile).knobs("narrative")  # the run's configuration, resolved once
    run = Run.open("08", profile=profile, knobs=knobs)
    news = knobs["collections"]["news"]
    col = prepare_collection("news", news)
    table = path_length_investigation(col.embeddings, col.dates, news["n_pairs"], knobs["seed"],
                                      params=DEFAULT_PARAMS, alt_params=news["alt_params"],
                                      jsd_base=knobs["jsd_base"],
                                      paper_mean=PAPER_TABLE1[("news", "maxcap")]["mean"])
    run.table(table, "narr_path_length_investigation")
    print(table.to_string())
    return table


if __name__ == "__main__":
    main()
