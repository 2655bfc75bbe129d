"""Narrative paths through the landscape (notebook 08): endpoints, widest paths, the random
chronological baseline, path metrics, the extraction over landscape seeds (``extraction``), the
comparison of the two methods (Tables 1 and 4: ``comparison``, ``paper_tables``) and the figures
(``figures``)."""
