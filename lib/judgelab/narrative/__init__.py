"""The Narrative Trails study: collections, landscape, paths, LLM judges, cost and OOD.

Paper: Keith 2025, *Electronics* 14(13):2735, doi:10.3390/electronics14132735 (LLM-as-a-judge
as a proxy for the mathematical coherence of narratives extracted from document collections).
"""
