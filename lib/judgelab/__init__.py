"""judgelab: the library behind the compendium reproducing two studies of LLMs as judges of narrative.

Subpackages by study: ``gateway`` (every LLM call), ``corpus`` (stories), ``sage`` (the literary
study), ``narrative`` (narrative extraction judged by LLMs), ``human`` (judges against people).
"""

__version__ = "0.1.0"
