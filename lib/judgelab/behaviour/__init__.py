"""Judge behaviour studies that neither paper runs (notebook 12): does the judge read the
text, or something else?

- :mod:`~judgelab.behaviour.recognition`: does the judge recognise the work it scores, against
  works nobody can have read (invented ones, the LLM stories), with a continuation probe beside?
- :mod:`~judgelab.behaviour.planted`: does it obey instructions planted in the judged text, beyond
  a neutral insertion and the noise of a repeat; does hardening hold on held-out attacks?
- :mod:`~judgelab.behaviour.length`: does the score move when the same story is cut or padded; do
  scores follow the tokens sent (title mode the negative control); narrative scores path length
  within an endpoint pair?
- :mod:`~judgelab.behaviour.self_preference`: does a judge favour stories written by its own model
  family?

A wing over both studies: it builds SAGE's and the narrative judges' requests with their own code
(``judgelab.sage.protocol``, ``judgelab.narrative.judges``) so that an unperturbed request is
byte for byte the one notebooks 02 and 09 sent (a cache hit). Nothing else imports it except the
estimate tool above the studies (tests/test_import_graph.py).
"""
