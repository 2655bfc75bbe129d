"""The SAGE study: L1-L3 rule-based features, L4-L6 LLM-judged layers, and their statistics.

Paper: Wang & Zhou 2026, arXiv:2605.07102 (SAGE: hierarchical, ontology-grounded LLM
evaluation of literary quality). Statistics of notebooks 05-06: :mod:`.scores` (rows -> scores),
:mod:`.reliability`, :mod:`.genre`, :mod:`.paper_tables`, :mod:`.paper_figures`,
:mod:`.paper_values` (the paper's reported numbers); rows with known effects for the tests are in
``tests/sage_synthetic.py``.
"""
