"""The Narrative Trails study: collections, landscape, paths, LLM judges, cost and OOD.

Paper: ``../shared/papers/002_9fe87766fa600d35.txt`` (LLM-as-a-judge as a proxy for the
mathematical coherence of narratives extracted from document collections).
"""
