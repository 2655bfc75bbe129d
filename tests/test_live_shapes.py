"""Each judge call shape that the notebooks send, once, on the live embedded model.

The notebook tests replay the smoke run's replies from a file (``tests/replay/``), so the live
engine is tested here, once per shape: the narrative judge in each of its four modes (notebook 09,
10 and 12's narrative calls), the holistic judge of the appendix (11) and the recognition probe (12),
at the smoke profile's budgets. One SAGE evaluation runs in ``test_sage_llm.py``, the llama.cpp
server in ``test_llama_cpp_server.py``. The replies are random-ish (a 135M model): what is asserted
is what every reply must have, never its text: it parses, it validates against the schema sent, the
scores lie on the scale, and the ledger counts one fresh call per request.
"""
from __future__ import annotations

import pandas as pd
import pytest

from judgelab.gateway import Gateway

pytestmark = pytest.mark.llm

TITLES = ["Storm floods the valley towns", "Relief convoys reach the flooded valley",
          "Valley towns rebuild after the floods"]
STORY = ("The ferry left at dusk, and Ilse stood at the rail with her father's letter folded in her glove. "
         "She had not opened it. When the lights of the town went out behind the headland she took the "
         "letter out, held it over the black water, and put it back.")


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    gateway = Gateway.from_settings(cache_path=tmp_path_factory.mktemp("live") / "c.sqlite", progress=False)
    assert gateway.is_embedded_small_model
    return gateway


def fresh_calls(gw) -> int:
    ledger = gw.ledger_frame()
    return int((~ledger["cached"].astype(bool)).sum()) if len(ledger) else 0


def test_the_narrative_judge_answers_each_mode_on_its_scale(gw):
    from judgelab.narrative.judges.prompts import MODES
    from judgelab.narrative.judges.run import Agent, build_requests
    from judgelab import profiles

    knobs = profiles.knobs("narrative_judges", "smoke")
    paths = pd.DataFrame([{"collection": "news", "pair_id": "p0", "method": "maxcap", "titles": TITLES}])
    meta, reqs = build_requests(paths, {"news": [Agent(0, 0.5, 2025)]}, MODES, max_tokens=knobs["max_tokens"],
                                reasoning_chars=knobs["reasoning_chars"])
    assert [m["mode"] for m in meta] == list(MODES)
    before = fresh_calls(gw)
    results = gw.run_batch(reqs, desc="live shapes")
    assert fresh_calls(gw) - before == len(reqs)
    for req, res in zip(reqs, results):
        assert res.status == "ok", (req.tags["mode"], res.error)
        parsed = req.schema.model_validate(res.parsed.model_dump())  # valid against the schema sent
        scores = [v for k, v in parsed.model_dump().items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        assert scores and all(1 <= v <= 10 for v in scores), (req.tags["mode"], parsed)


def test_the_holistic_judge_gives_one_score_on_its_scale(gw):
    from judgelab.human.holistic import build_request
    from judgelab import profiles

    knobs = profiles.knobs("human", "smoke")
    req = build_request("ferry", STORY, dataset="confederacy", max_tokens=knobs["holistic_max_tokens"],
                        temperature=knobs["temperature"], seed=knobs["seed"], reason_chars=knobs["holistic_reason_chars"])
    res = gw.chat(req)
    assert res.status == "ok", res.error
    parsed = req.schema.model_validate(res.parsed.model_dump()).model_dump()
    assert 1 <= int(parsed["score"]) <= 10 and set(parsed) == set(req.schema.model_fields)


def test_the_recognition_probe_answers_in_its_schema(gw):
    from judgelab.behaviour.recognition import build_requests
    from judgelab import profiles
    from judgelab.sage.protocol.evaluation import EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    knobs = profiles.knobs("behaviour", "smoke")
    items = [EvalItem("ferry", "canonical", "", "L4", mode,
                      prepare_input(mode, text=STORY, title="The Last Ferry", author="Nora Vell", max_text_tokens=300))
             for mode in ("content", "title")]
    meta, reqs = build_requests(items, knobs)
    results = gw.run_batch(reqs, desc="recognition")
    for req, res in zip(reqs, results):
        assert res.status == "ok", res.error
        parsed = req.schema.model_validate(res.parsed.model_dump()).model_dump()
        for key, spec in req.schema.model_json_schema()["properties"].items():
            if spec.get("maxLength") and isinstance(parsed.get(key), str):
                assert len(parsed[key]) <= spec["maxLength"]
