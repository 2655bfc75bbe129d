"""Analyses after judging (notebook 10), one module per job:

- cost: ``cost`` (tokens, seconds and dollars per mode, Table 5);
- out-of-distribution narratives: ``joint_collection`` (news + VisPub in one embedding space),
  ``ood_narratives`` (generating mixed and perturbed narratives), ``ood_tests`` (statistics by
  kind), ``ood_study`` (the study end to end);
- follow-ups on the judged paths: ``inputs`` (what notebook 10 reads, and the table they all
  read), ``prediction`` (Tables 6–7), ``stability`` (folds over endpoint pairs), ``disagreement``
  (by score range, with the coherence), ``correlations`` (temporal span, complexity);
- ``settings`` (the knobs by profile), ``paper_tables`` (the paper's values beside ours),
  ``figures`` (Figure 9 and the OOD comparison).
"""
