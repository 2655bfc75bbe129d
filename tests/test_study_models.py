"""Each study's judge: the papers' choices on OpenAI, and the precedence of
the settings that override them."""
from __future__ import annotations

import pytest

from judgelab import study_models
from judgelab.gateway.errors import ConfigError

STUDY_VARS = ("JUDGELAB_BACKEND", "JUDGELAB_MODEL", "JUDGELAB_BASE_URL", "OPENAI_BASE_URL", "JUDGELAB_NARRATIVE_AGENTS",
              *(f"JUDGELAB_{s.upper()}_{what}" for s in study_models.PAPER_JUDGES for what in ("MODEL", "REASONING_EFFORT")))


@pytest.fixture
def env(monkeypatch):
    for var in STUDY_VARS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def models(**kw):
    return {s: study_models.resolve_judge(s, **kw).model for s in study_models.PAPER_JUDGES}


def test_the_papers_judges_on_openai(env):
    assert models(backend="openai") == {"sage": "gpt-5-mini", "narrative": "gpt-4.1", "holistic": "gpt-4.1"}
    sage = study_models.resolve_judge("sage", backend="openai")
    assert sage.reasoning.default == "medium" and sage.reasoning.override is None and "SAGE" in sage.source
    assert study_models.resolve_judge("narrative", backend="openai").reasoning.default is None
    # the embedded model stays the default backend, and gets no paper model
    assert models() == {"sage": None, "narrative": None, "holistic": None}
    env.setenv("JUDGELAB_BACKEND", "openai")
    assert models()["sage"] == "gpt-5-mini"


def test_precedence_argument_then_study_then_global_then_paper(env):
    env.setenv("JUDGELAB_BACKEND", "openai")
    env.setenv("JUDGELAB_MODEL", "gpt-4o")
    assert models() == {"sage": "gpt-4o", "narrative": "gpt-4o", "holistic": "gpt-4o"}
    env.setenv("JUDGELAB_SAGE_MODEL", "gpt-5-mini")
    assert models() == {"sage": "gpt-5-mini", "narrative": "gpt-4o", "holistic": "gpt-4o"}
    assert study_models.resolve_judge("sage", model="o3-mini").model == "o3-mini"
    assert study_models.resolve_judge("sage").source == "JUDGELAB_SAGE_MODEL"
    # per-study models apply to any backend (a local server's model names, say)
    env.setenv("JUDGELAB_BACKEND", "openai-compatible")
    env.setenv("JUDGELAB_BASE_URL", "http://127.0.0.1:9/v1")
    env.delenv("JUDGELAB_MODEL")
    assert models() == {"sage": "gpt-5-mini", "narrative": None, "holistic": None}


def test_the_effort_override_and_bad_values(env):
    env.setenv("JUDGELAB_SAGE_REASONING_EFFORT", "Low")
    assert study_models.resolve_judge("sage", backend="openai").reasoning.override == "low"
    env.setenv("JUDGELAB_SAGE_REASONING_EFFORT", "max")
    with pytest.raises(ConfigError, match="JUDGELAB_SAGE_REASONING_EFFORT"):
        study_models.resolve_judge("sage", backend="openai")
    with pytest.raises(ConfigError, match="unknown study"):
        study_models.resolve_judge("poetry")
    assert study_models.agent_design() == "temperature" and study_models.agent_design("seed_only") == "seed-only"
    env.setenv("JUDGELAB_NARRATIVE_AGENTS", "seed-only")
    assert study_models.agent_design() == "seed-only"
    with pytest.raises(ConfigError, match="JUDGELAB_NARRATIVE_AGENTS"):
        study_models.agent_design("random")


def test_open_gateway_builds_the_studys_judge_without_a_key_in_replay(env, tmp_path):
    env.delenv("OPENAI_API_KEY", raising=False)
    gw = study_models.open_gateway("sage", backend="openai", cache_mode="replay", cache_path=tmp_path / "c.sqlite",
                             transcripts=False, progress=False)
    assert (gw.model_name, gw.study, gw.reasoning.default) == ("gpt-5-mini", "sage", "medium")
    assert gw.rejects_temperature
    nar = study_models.open_gateway("narrative", backend="openai", cache_mode="replay", cache_path=tmp_path / "c.sqlite",
                              transcripts=False, progress=False)
    assert nar.model_name == "gpt-4.1" and not nar.rejects_temperature


def test_every_llm_notebook_builds_its_gateway_on_its_studys_judge():
    """Notebooks 09-11 open the gateway through judgelab.study_models, SAGE's 02-04 through LayerReport."""
    from judgelab import paths

    for nb, study in study_models.NOTEBOOK_STUDY.items():
        if study == "sage":
            continue
        source = next(paths.project_root().joinpath("notebooks").glob(f"{nb}_*.py")).read_text(encoding="utf-8")
        assert f'open_gateway("{study}"' in source and "Gateway.from_settings" not in source
    report = paths.project_root().joinpath("lib", "judgelab", "sage", "report.py").read_text(encoding="utf-8")
    assert 'open_gateway("sage"' in report
