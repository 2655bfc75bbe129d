"""Narrative paths through the landscape (notebook 08): endpoints, widest paths, the random
chronological baseline, path metrics and the comparison of the two methods (Tables 1 and 4)."""
