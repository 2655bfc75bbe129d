"""Narrative paths through the landscape (notebook 08): endpoints, widest paths, the random
chronological baseline, path metrics, their extraction and the comparison of the two methods."""
