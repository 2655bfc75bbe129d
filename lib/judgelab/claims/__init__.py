"""The claims scorecard (notebook 13): every headline claim of both papers, its recomputed value
with a 95% interval, a verdict by a rule fixed before the run, and the units a live run needs
(docs/claims.md). It reads every study's tables and imports no study.
"""
