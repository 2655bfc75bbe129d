"""The authors' critical coherence of the news landscape, as a cited constant.

The paper does not report it; the printed output of the authors' examples notebook does (Narrative
Trails repository, ``Examples/news_articles.ipynb``: "Critical Coherence: 0.4774725550696371",
UMAP seed 42, n_neighbors 16, min_cluster_size 4, natural log, all 540 articles), on their
machine. The authors' code run here gives this project's value (to 2e-8), so a difference from
0.4775 measures the platform (UMAP's projection depends on umap-learn, numba, scipy and the CPU),
not the method. Never an input to a computation; it appears only in ``paper_value`` columns,
beside "authors' method run here" (:mod:`judgelab.narrative.landscape.comparison`).
"""
from __future__ import annotations

AUTHORS_CRITICAL_NEWS = 0.4774725550696371
AUTHORS_CRITICAL_PARAMS = "16/4"
"""The parameter set (n_neighbors / min_cluster_size) of the notebook that printed it."""
AUTHORS_CRITICAL_SOURCE = ("authors' notebook output (their machine): Narrative Trails repo, "
                           "Examples/news_articles.ipynb (seed 42, 16/4, ln)")
