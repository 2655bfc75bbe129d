"""Judge behaviour studies that neither paper runs (notebook 12): does the judge read the
text, or something else?

- :mod:`~judgelab.behaviour.recognition`: does the judge recognise the work it scores (its own
  probe and schema; a stated matching rule against the manifest)?
- :mod:`~judgelab.behaviour.planted`: does it obey instructions planted in the judged text (a
  fixed, versioned perturbation family; a hardening option)?
- :mod:`~judgelab.behaviour.length`: do scores follow length within genre, and does SAGE's genre
  gap survive a length term; do narrative scores follow path length at equal minimum coherence?
- :mod:`~judgelab.behaviour.self_preference`: does a judge favour stories written by its own model
  family?

A wing over both studies: it builds SAGE's and the narrative judges' requests with their own code
(``judgelab.sage.protocol``, ``judgelab.narrative.judges``) so that an unperturbed request is
byte for byte the one notebooks 02 and 09 sent (a cache hit). Nothing else imports it except the
estimate tool above the studies (tests/test_import_graph.py).
"""
