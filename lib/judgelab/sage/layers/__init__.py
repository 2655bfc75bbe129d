"""SAGE's rule-based layers L1-L3 (notebook 01): one shared segmentation of a story, then lexical
(L1), narrative-structure (L2) and thematic (L3) features; ``features`` gathers them per corpus."""
