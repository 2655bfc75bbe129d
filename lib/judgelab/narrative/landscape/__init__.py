"""The coherence landscape of a collection (notebook 07): documents, projection, coherence, graph.

- ``collections`` loads a document collection (news, VisPub, any CSV) with checked columns;
- ``projection`` fits UMAP + HDBSCAN topics with soft memberships;
- ``coherence`` is the paper's eq. 1 (angular similarity x topic similarity);
- ``graph`` the critical coherence (MST), the sparse graph and the temporal constraint;
- ``build`` builds every seed's landscape once (one fit per seed, every JSD base from it);
- ``summaries`` the JSD base's effect and the sparse graph's size; ``comparison`` the critical
  coherence beside the authors' (``paths.paper_values``); ``figures`` notebook 07's figures;
- ``store`` reads and writes notebook 07's interim files.
"""
