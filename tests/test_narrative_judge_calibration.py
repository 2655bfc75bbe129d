"""Score anchoring per judge mode, as the paper's section 3.4.7 states it."""
from __future__ import annotations

import re

from judgelab.narrative.judges import prompts as jp


def _system(mode: str) -> str:
    return " ".join(jp.render(mode, ["A", "B"], "news").system.split())


def test_each_mode_carries_the_papers_anchoring():
    assert not re.search(r"\b\d+\s*(to|-|–)\s*\d+\b", _system("simple").replace("1 to 10", ""))  # none
    cot = _system("cot")
    assert re.search(r"4\s*(to|-|–)\s*6", cot) and "moderate" in cot.lower()          # 4-6 moderate
    complex_ = _system("complex")
    assert re.search(r"moderate, 5 to 7", complex_) and "random" in complex_           # 5-7 moderate
    assert jp.template_version("complex") == "narr-judge-complex-v2"
