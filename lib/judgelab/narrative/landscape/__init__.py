"""The coherence landscape of a collection (notebook 07): documents, projection, coherence, graph.

- ``collections`` loads a document collection (news, VisPub, any CSV) with checked columns;
- ``projection`` fits UMAP + HDBSCAN topics with soft memberships;
- ``coherence`` is the paper's eq. 1 (angular similarity x topic similarity);
- ``graph`` the critical coherence (MST), the sparse graph and the temporal constraint;
- ``build`` chains them for one collection and seed; ``store`` reads and writes its files.
"""
