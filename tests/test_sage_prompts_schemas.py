"""SAGE prompt templates (rendering, versions, what each mode may show) and reply schemas."""
from __future__ import annotations

import json
import shutil

import pytest
from pydantic import ValidationError

from judgelab.sage.protocol import prompts

from judgelab.sage.protocol import schemas
from judgelab.sage.protocol.modes import prepare_input

STORY = ("THE BRASS KEY\n\nBy Ottoline Marsh\n\nThe rain had not stopped for three days when Edith found "
         "the key under the floorboard. It was small and brass and warm, as if someone had held it a moment "
         "before. She told nobody. At supper her brother spoke of the mill closing, and their mother wept "
         "quietly into the soup while the clock ticked on.")
SENTENCES = ["The rain had not stopped for three days", "It was small and brass and warm",
             "At supper her brother spoke of the mill closing"]


def all_prompts(layer: str, mode: str) -> list[str]:
    p = prepare_input(mode, text=STORY if mode == "content" else None, title="The Brass Key",
                      author="Ottoline Marsh", max_text_tokens=5000)
    out = [prompts.system_prompt(), prompts.first_turn(layer, mode, "validator", p.material, "", "v2")[0],
           prompts.first_turn(layer, mode, "validator", p.material, prompts.blind_instructions(layer, mode))[1],
           prompts.validator_review_prompt(layer, mode, "Round 1: {}"),
           prompts.first_turn(layer, mode, "evaluator", p.material, prompts.round_instructions(layer, mode, 1))[1]]
    out += [prompts.round_instructions(layer, mode, r) for r in range(2, 6)]
    return out


@pytest.mark.parametrize("layer", ["L4", "L5", "L6"])
def test_title_mode_prompts_contain_no_sentence_of_the_story(layer):
    text = "\n".join(all_prompts(layer, "title"))
    assert '"The Brass Key" by Ottoline Marsh' in text
    for s in SENTENCES:
        assert s not in text


@pytest.mark.parametrize("layer", ["L4", "L5", "L6"])
def test_content_mode_prompts_contain_neither_title_nor_author(layer):
    text = "\n".join(all_prompts(layer, "content"))
    assert SENTENCES[0] in text
    for name in ("Brass Key", "BRASS KEY", "Ottoline", "Marsh"):
        assert name not in text


def test_material_refuses_the_other_modes_inputs():
    with pytest.raises(prompts.PromptError):
        prompts.material("content", text="x", title="T")
    with pytest.raises(prompts.PromptError):
        prompts.material("title", text="x", title="T", author="A")


def test_layer_specs_follow_table_1():
    assert prompts.layer_spec("L4").codes == ("IPD", "CVP", "CSP", "CPC")
    assert prompts.layer_spec("L5").codes == ("AC", "PI", "EG", "ENC")
    assert prompts.layer_spec("L6").codes == ("LP", "MR", "HC", "ME")
    assert "Daoist" in prompts.round_instructions("L6", "content", 2)         # L6 names non-Western traditions
    assert "Hallucination" in prompts.round_instructions("L4", "content", 2)  # L4's R2 is a hallucination check
    assert "Restraint" in prompts.round_instructions("L5", "content", 2)      # L5's R2 is a projection check
    assert "Change confidence only" in prompts.round_instructions("L5", "title", 4)


def test_render_is_single_pass_and_strict():
    assert prompts.render("a {{x}} b", x="{{y}}") == "a {{y}} b"
    with pytest.raises(prompts.PromptError):
        prompts.render("{{x}} {{y}}", x=1)


def test_template_version_changes_when_a_template_changes(tmp_path, monkeypatch):
    v1 = prompts.template_version("L4")
    assert v1.startswith("sage-v5-L4-")
    root = tmp_path / "proj"
    shutil.copytree(prompts.template_dir(), root / "prompts" / "sage")
    monkeypatch.setenv("JUDGELAB_PROJECT_ROOT", str(root))
    assert prompts.template_version("L4") == v1
    (root / "prompts" / "sage" / "round3.md").write_text("changed {{layer_short}} {{boundary}}")
    assert prompts.template_version("L4") != v1


def valid_scores(codes, score=3.5):
    return {c: {"score": score, "confidence": 3, "evidence_strength": "moderate", "evidence": "a quote"} for c in codes}


def r1_scores(codes, score=3.5, reasoning="r"):
    return {c: {**d, "reasoning": reasoning} for c, d in valid_scores(codes, score).items()}


def test_round_schema_accepts_a_valid_reply_and_rejects_bad_values():
    codes = prompts.layer_spec("L5").codes
    R1 = schemas.round_schema("L5", "content", 1, 60, 80, 20)
    ok = R1.model_validate({"extracted": "grief, restraint", "scores": r1_scores(codes)})
    assert ok.scores.AC.score == 3.5 and ok.scores.AC.reasoning == "r"
    assert R1.model_validate({"extracted": "x", "scores": r1_scores(codes, 4)}).scores.PI.score == 4.0
    good = r1_scores(codes)
    bad = [r1_scores(codes, 3.75), r1_scores(codes, 5.1), {**good, "AC": {**good["AC"], "confidence": 6}},
           {c: v for c, v in good.items() if c != "EG"},
           {**good, "PI": {**good["PI"], "evidence": "x" * 61}},
           {**good, "PI": {**good["PI"], "reasoning": "x" * 21}},          # reasoning capped at 20
           {**good, "EG": valid_scores(codes)["EG"]},                     # R1 needs reasoning per dimension
           {**good, "XX": good["AC"]}]
    for scores in bad:
        with pytest.raises(ValidationError):
            R1.model_validate({"extracted": "x", "scores": scores})
    with pytest.raises(ValidationError):
        R1.model_validate({"extracted": "x" * 81, "scores": good})
    with pytest.raises(ValidationError):     # sage-v4's one reasoning string is gone
        R1.model_validate({"extracted": "x", "reasoning": "r", "scores": good})


def test_reasoning_per_dimension_only_in_round_one_and_capped_by_its_own_knob():
    r1 = schemas.round_schema("L4", "content", 1, 60, 80, 16).model_json_schema()
    dim = r1["$defs"][next(k for k in r1["$defs"] if k.startswith("DimensionScore"))]
    assert dim["properties"]["reasoning"]["maxLength"] == 16 and "reasoning" in dim["required"]
    assert "reasoning" not in r1["properties"]
    default = schemas.round_schema("L4", "content", 1, 60, 80).model_json_schema()
    assert '"maxLength": 80' in json.dumps(default["$defs"])          # default: note_chars
    for rnd in (2, 3, 4, 5):
        assert '"reasoning"' not in json.dumps(schemas.round_schema("L4", "content", rnd, 60, 80).model_json_schema())
    assert '"reasoning"' not in json.dumps(schemas.validator_schema("L4", "blind", 60, 80).model_json_schema())
    with pytest.raises(ValueError):
        schemas.round_schema("L4", "content", 1, 60, 80, 0)


def test_every_layer_prompt_states_the_papers_principles_and_pitfalls():
    """The paper's "core evaluation principles" and "common pitfalls" reach every layer's calls."""
    for layer in ("L4", "L5", "L6"):
        for mode in ("content", "title"):
            system, user = prompts.first_turn(layer, mode, "evaluator", "MATERIAL", prompts.round_instructions(layer, mode, 1))
            text = (system + user).lower()
            for phrase in ("theoretical consistency", "explicitness is not depth", "evidence decides",
                           "one layer only", "do not impose your own", "no inference beyond what the evidence supports",
                           "dimensions are independent"):
                assert phrase in text, (layer, mode, phrase)
            assert '"reasoning"' in user          # R1 asks for reasoning per dimension
        assert "explicit" in prompts.layer_spec(layer).projection.lower()


def test_schema_shapes_per_round_mode_and_validator():
    s = json.dumps(schemas.round_schema("L4", "content", 1, 60, 80).model_json_schema())
    assert '"maxLength": 60' in s and "knows_work" not in s
    assert "knows_work" in json.dumps(schemas.round_schema("L4", "title", 1, 60, 80).model_json_schema())
    r2 = schemas.round_schema("L6", "content", 2, 60, 80).model_fields
    assert {"western_frame_imposed", "explicit_philosophy_bias", "profundity_bias"} <= set(r2)
    assert "hallucination_found" in schemas.round_schema("L4", "content", 2, 60, 80).model_fields
    assert "overall_confidence" in schemas.round_schema("L4", "content", 5, 60, 80).model_fields
    rev = schemas.validator_schema("L4", "review", 60, 80)
    with pytest.raises(ValidationError):
        rev.model_validate({"projection_bias": "none", "hallucination": "low", "boundary_violation": "none",
                            "reasoning_quality": "good", "confidence_calibration": "calibrated",
                            "agreements": "", "disagreements": "", "trust_level": "total",
                            "scores": valid_scores(prompts.layer_spec("L4").codes)})
    enum = schemas.dimension_score_model(60).model_json_schema()["properties"]["score"]["enum"]
    assert enum[:3] == [1.0, 1.1, 1.2] and enum[-1] == 5.0 and len(enum) == 41   # one decimal


def _material(mode: str) -> str:
    return prepare_input(mode, text=STORY if mode == "content" else None, title="The Brass Key",
                         author="Ottoline Marsh", max_text_tokens=5000).material


@pytest.mark.parametrize("mode", ["content", "title"])
def test_shared_prefix_layout_puts_system_then_material_first_in_every_track_and_layer(mode):
    """sage-v4: one system message for every layer, mode and role (no layer in it); every
    track's first user message starts with the material, then names and describes its layer,
    then gives the role's block and the turn's instructions."""
    mat = _material(mode)
    firsts = {(layer, role): prompts.first_turn(layer, mode, role, mat, "DO IT")
              for layer in ("L4", "L5", "L6") for role in prompts.ROLES}
    assert {system for system, _ in firsts.values()} == {prompts.system_prompt()}
    for (layer, role), (system, user) in firsts.items():
        assert user == "\n\n".join([mat, prompts.layer_task(layer), prompts.role_block(layer, role), "DO IT"])
        assert prompts.layer_block(layer) in prompts.layer_task(layer)
        assert prompts.layer_spec(layer).title not in system
        for code in prompts.layer_spec(layer).codes:
            assert code in prompts.layer_task(layer)
    for word in ("LAYER TO ASSESS", "YOUR ROLE", "Mode:", "ROUND"):
        assert word not in prompts.system_prompt()


def test_the_v2_layout_keeps_the_layer_and_role_before_the_material():
    mat = _material("content")
    system, user = prompts.first_turn("L4", "content", "validator", mat, "DO IT", "v2")
    assert system.startswith(prompts.role_block("L4", "validator"))
    assert prompts.layer_block("L4") in system and prompts.layer_block("L5") not in system
    assert user == mat + "\n\nDO IT"
    with pytest.raises(prompts.PromptError):
        prompts.first_turn("L4", "content", "validator", mat, "x", "interleaved")
    with pytest.raises(prompts.PromptError):
        prompts.role_block("L4", "judge")
