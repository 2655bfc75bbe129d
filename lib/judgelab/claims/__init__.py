"""The claims scorecard (notebook 13): every headline claim of both papers, its recomputed value
with a 95% interval, a verdict by a rule fixed before the run, and the units a live run needs.

``claims.yaml`` (the register) -> :mod:`register`; :mod:`verdicts` (the rules); :mod:`intervals`
(the scorecard's own intervals where a table has none); :mod:`power` (seeded simulation);
:mod:`scorecard` (the table); :mod:`figure`; :mod:`settings` (knobs per profile).

A tool above the studies, like ``estimate``: it reads every study's tables and cites their
``paper_values`` (by reference, resolved with importlib), and no study imports it.
"""
