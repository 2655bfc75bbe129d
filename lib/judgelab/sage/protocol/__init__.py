"""SAGE's LLM-judged layers L4-L6 (notebooks 02-04): what the judge is shown (``modes``), the prompts
and reply schemas, one evaluation (5-round evaluator + blind-then-review validator,
``evaluation``) and many of them at once (``runner``)."""
