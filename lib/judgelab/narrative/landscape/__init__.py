"""The coherence landscape of a collection (notebook 07): documents, projection, coherence, graph;
one module per job (CONTRIBUTING.md)."""
