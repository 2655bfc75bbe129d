"""The authors' critical coherence of the news landscape, as a cited constant.

The paper does not report it; the printed output of the authors' news notebook does (Narrative
Trails repository, ``Examples/news_articles.ipynb``: "Critical Coherence: 0.4774725550696371",
UMAP seed 42, n_neighbors 16, min_cluster_size 4, natural log, all 540 articles). Never an input
to a computation; it appears only in ``paper_value`` columns and as a reference line.
"""
from __future__ import annotations

AUTHORS_CRITICAL_NEWS = 0.4774725550696371
AUTHORS_CRITICAL_SOURCE = "Narrative Trails repo, Examples/news_articles.ipynb output (seed 42, ln)"
