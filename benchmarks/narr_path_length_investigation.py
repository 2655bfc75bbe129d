"""Path-length investigation on the full news collection (issue 14, deliverable 5, item 4).

Runs :func:`judgelab.narrative.paths.length_investigation.path_length_investigation` on all 540
news articles with the authors' embeddings, the paper profile's 200 pairs and main seed, and
writes ``narr_path_length_investigation`` through :func:`judgelab.reporting.save_table`.
Usage: ``JUDGELAB_LLAMA_THREADS=1 .venv/bin/python benchmarks/narr_path_length_investigation.py``.
"""
from judgelab import profiles, reporting
from judgelab.narrative.landscape.build import prepare_collection
from judgelab.narrative.paths.length_investigation import path_length_investigation
from judgelab.narrative.paths.paper_values import PAPER_TABLE1
from judgelab.narrative.settings import DEFAULT_PARAMS

if __name__ == "__main__":
    knobs = profiles.knobs("narrative", "paper")
    news = knobs["collections"]["news"]
    col = prepare_collection("news", news)
    table = path_length_investigation(col.embeddings, col.dates, news["n_pairs"], knobs["seed"],
                                      params=DEFAULT_PARAMS, alt_params=news["alt_params"],
                                      jsd_base=knobs["jsd_base"],
                                      paper_mean=PAPER_TABLE1[("news", "maxcap")]["mean"])
    reporting.save_table(table, "narr_path_length_investigation")
    print(table.to_string())
